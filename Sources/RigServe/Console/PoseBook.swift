import Foundation
import RigCore
import RigRuntime
import Synchronization

/// Named poses the operator saved (`PUT /api/poses/NAME`), kept in `poses.json` in the
/// state directory and replaced atomically on every change.
public final class PoseBook: Sendable {
    public let filePath: String
    private let poses: Mutex<[String: [String: Double]]>

    /// Loads `poses.json` from `directory` (none yet: empty). A file that cannot be read
    /// is an error: saving over it would lose the poses in it.
    public init(directory: String) throws(ServeError) {
        filePath = directory.hasSuffix("/") ? directory + "poses.json" : directory + "/poses.json"
        var loaded: [String: [String: Double]] = [:]
        if FileManager.default.fileExists(atPath: filePath) {
            guard let data = FileManager.default.contents(atPath: filePath),
                let file = try? JSONDecoder().decode(File.self, from: data)
            else {
                throw ServeError(.internalServerError, "\(filePath):1:1: error: $: not a poses file ({\"poses\": {NAME: {AXIS: NUMBER}}}); fix or move it")
            }
            loaded = file.poses
        }
        poses = Mutex(loaded)
    }

    private struct File: Codable {
        var poses: [String: [String: Double]]
    }

    /// A name the URL and the file can carry: 1–64 ASCII letters, digits, `-`, `_`, `.`,
    /// not starting with `.` (the document's pattern `^[A-Za-z0-9_-][A-Za-z0-9._-]{0,63}$`).
    public static func isValidName(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        func allowed(_ b: UInt8) -> Bool {
            (48...57).contains(b) || (65...90).contains(b) || (97...122).contains(b) || b == 45 || b == 95 || b == 46
        }
        return (1...64).contains(bytes.count) && bytes[0] != 46 && bytes.allSatisfy(allowed)
    }

    public var all: [String: [String: Double]] { poses.withLock { $0 } }

    public func pose(named name: String) -> [String: Double]? { poses.withLock { $0[name] } }

    /// Saves `pose` as `name` (replacing one of that name) and writes the file.
    public func save(_ name: String, pose: [String: Double]) throws(ServeError) {
        let text: String = poses.withLock { p in
            p[name] = pose
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            return (try? encoder.encode(File(poses: p))).map { String(decoding: $0, as: UTF8.self) } ?? "{\"poses\": {}}"
        }
        do {
            try AtomicFile.write(text + "\n", to: filePath, createDirectory: true)
        } catch {
            throw ServeError(.internalServerError, "cannot save the pose: \(error)")
        }
    }
}
