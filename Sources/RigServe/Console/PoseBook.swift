import FoundationEssentials
import Glibc
import RigCore
import RigRuntime
import Synchronization

/// Named poses the operator saved (`PUT /api/poses/NAME`), kept in `poses.json` in the
/// state directory and replaced atomically on every change.
public final class PoseBook: Sendable {
    public let filePath: String
    private let poses: Mutex<[String: [String: Double]]>

    /// Why the file could not be used, when it could not (the caller logs it): it was
    /// moved aside, whole, to `poses.json.damaged`, and the server starts with no poses.
    public let loadWarning: String?

    /// Loads `poses.json` from `directory` (none yet: empty). A file that cannot be read
    /// (cut short by a power loss, edited by hand) is moved aside to `poses.json.damaged`
    /// rather than saved over, so nothing in it is lost, and the server still starts.
    public init(directory: String) throws(ServeError) {
        filePath = directory.hasSuffix("/") ? directory + "poses.json" : directory + "/poses.json"
        var loaded: [String: [String: Double]] = [:]
        var warning: String?
        if FileManager.default.fileExists(atPath: filePath) {
            if let data = FileManager.default.contents(atPath: filePath), let file = try? JSONDecoder().decode(File.self, from: data) {
                loaded = file.poses.filter { $0.value.values.allSatisfy(\.isFinite) }
            } else {
                let aside = filePath + ".damaged"
                _ = try? FileManager.default.removeItem(atPath: aside)
                do { try FileManager.default.moveItem(atPath: filePath, toPath: aside) } catch {
                    throw ServeError(
                        .internalServerError, "\(filePath): not a poses file, and it cannot be moved aside (\(errorText(error))); fix or move it")
                }
                warning =
                    "\(filePath) was not a poses file ({\"poses\": {NAME: {AXIS: NUMBER}}}; cut short by a power loss?): moved aside to \(aside), starting with no saved poses"
            }
        }
        loadWarning = warning
        poses = Mutex(loaded)
    }

    private struct File: Codable {
        var poses: [String: [String: Double]]
    }

    /// A name people write and the URL and the file carry: 1–64 letters (ASCII and the
    /// accented Latin ones, "Chêne", "Großer Baum"), digits, spaces, `-`, `_`, `.`; not
    /// starting with `.` or a space (the document's pattern
    /// `^[A-Za-z0-9À-ÖØ-öø-ÿ_-][A-Za-z0-9À-ÖØ-öø-ÿ ._-]{0,63}$`).
    public static func isValidName(_ name: String) -> Bool {
        let scalars = Array(name.unicodeScalars)
        func allowed(_ s: Unicode.Scalar, first: Bool) -> Bool {
            switch s.value {
            case 0x30...0x39, 0x41...0x5A, 0x61...0x7A, 0x2D, 0x5F: true  // digits, letters, - _
            case 0xC0...0xD6, 0xD8...0xF6, 0xF8...0xFF: true  // Latin-1 letters
            case 0x2E, 0x20: !first  // . and space, not first
            default: false
            }
        }
        guard (1...64).contains(scalars.count) else { return false }
        return scalars.enumerated().allSatisfy { allowed($1, first: $0 == 0) }
    }

    public var all: [String: [String: Double]] { poses.withLock { $0 } }

    public func pose(named name: String) -> [String: Double]? { poses.withLock { $0[name] } }

    /// Poses kept at most: the page lists them all, and the file stays small.
    public static let maxPoses = 100

    /// Saves `pose` as `name` (replacing one of that name) and writes the file.
    public func save(_ name: String, pose: [String: Double]) throws(ServeError) {
        guard pose.values.allSatisfy(\.isFinite) else { throw ServeError(.badRequest, "the pose has a position that is not a number") }
        try write { (next: inout [String: [String: Double]]) throws(ServeError) in
            guard next[name] != nil || next.count < Self.maxPoses else {
                throw ServeError(.unprocessableContent, "at most \(Self.maxPoses) poses are kept; delete one first")
            }
            next[name] = pose
        }
    }

    /// Deletes the pose `name` and writes the file; 404 when there is none.
    public func delete(_ name: String) throws(ServeError) {
        try write { (next: inout [String: [String: Double]]) throws(ServeError) in
            guard next.removeValue(forKey: name) != nil else { throw ServeError(.notFound, "no saved pose \"\(name)\"") }
        }
    }

    /// Applies `change` to a copy of the poses, encodes it and, only then, keeps it and
    /// writes the file: a refused change or a failed encode changes nothing.
    private func write(_ change: (inout [String: [String: Double]]) throws(ServeError) -> Void) throws(ServeError) {
        let encoded: Result<Data, ServeError> = poses.withLock { p in
            var next = p
            do throws(ServeError) { try change(&next) } catch { return .failure(error) }
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            guard let data = try? encoder.encode(File(poses: next)) else {
                return .failure(ServeError(.internalServerError, "cannot save the poses: they could not be encoded"))
            }
            p = next
            return .success(data)
        }
        let text = String(decoding: try encoded.get(), as: UTF8.self)
        do {
            try AtomicFile.write(text + "\n", to: filePath, createDirectory: true)
        } catch {
            throw ServeError(.internalServerError, "cannot save the pose: \(error)")
        }
    }
}
