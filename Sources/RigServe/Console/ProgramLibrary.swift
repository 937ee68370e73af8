import FoundationEssentials
import Glibc
import RigCore
import RigFormat
import RigRuntime
import Synchronization

/// One program in `--programs DIR`, as `GET /api/programs` lists it.
public struct ProgramEntry: Sendable, Equatable, Encodable {
    public var file: String
    /// `keyframes`, `panorama`, `timelapse`, … (nil if the file does not parse).
    public var kind: String?
    /// Steps of a stepped program (0 for a continuous path).
    public var steps: Int?
    /// Seconds the run takes with every step advanced at once, park included.
    public var durationSeconds: Double?
    /// The check's verdict from where the rig stands now.
    public var feasible: Bool
    /// The check's first message (or the parse error) when not feasible.
    public var message: String?

    private enum Keys: String, CodingKey { case file, kind, steps, durationSeconds, feasible, message }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: Keys.self)
        try c.encode(file, forKey: .file)
        try c.encode(kind, forKey: .kind)
        try c.encode(steps, forKey: .steps)
        try c.encode(durationSeconds, forKey: .durationSeconds)
        try c.encode(feasible, forKey: .feasible)
        try c.encode(message, forKey: .message)
    }
}

/// The programs in `--programs DIR`: every `*.json` file directly in it, parsed for the
/// server's rig (a program's own `rig` path is ignored: it plays on the rig the server
/// drives; a program that embeds a rig must embed the served one, axes by name and
/// limits, or it is listed as not playable and refused) and checked with the same `FeasibilityChecker` as `rig check`, from the pose
/// the rig is at.
public final class ProgramLibrary: Sendable {
    public let directory: String?
    public let rig: Rig
    let rigText: String
    let rigPath: String
    let cache = Mutex<[String: Checked]>([:])

    /// A program ready to play, with its check.
    public struct Checked: Sendable {
        public var program: Program
        public var consoleProgram: HostedProgram
        public var report: FeasibilityReport
        /// The file's SHA-256, for its shot log.
        public var sha256: String
        fileprivate var stamp: String
    }

    /// - Parameters:
    ///   - rigText, rigPath: the rig file the server runs (a program is parsed against it).
    /// The served rig's camera reports each shot's end (not the simulator): its shots hold
    /// the player until they do.
    public let cameraReportsShots: Bool

    /// Why a program cannot be shot with the served rig's camera (the composition root's
    /// `CameraBackends.problem`, as `rig play` asks it), if it cannot.
    private let cameraProblem: @Sendable (Program) -> String?

    public init(
        directory: String?, rig: Rig, rigText: String, rigPath: String, cameraReportsShots: Bool = false,
        cameraProblem: @escaping @Sendable (Program) -> String? = { _ in nil }
    ) {
        self.cameraReportsShots = cameraReportsShots
        self.cameraProblem = cameraProblem
        self.directory = directory
        self.rig = rig
        self.rigText = rigText
        self.rigPath = rigPath
    }

    /// The program files, sorted by name.
    public func files() -> [String] {
        guard let directory, let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return [] }
        return names.filter { $0.hasSuffix(".json") && !$0.hasPrefix(".") && !Self.isRig(at: directory + "/" + $0) }.sorted()
    }

    /// Every program with its verdict from `startPose`; with `cameraChoices` (a camera the
    /// rig sets, connected), a program whose exposure or bracket the camera cannot take is
    /// not feasible either, with the message `POST /api/play` would give.
    public func list(startPose: [Double], cameraChoices: CameraChoices? = nil) -> [ProgramEntry] {
        files().map { file in
            do {
                let checked = try load(file, fromStep: 1, startPose: startPose)
                var feasible = checked.report.feasible && checked.report.intervalMisses.isEmpty
                var message = checked.report.problems.first?.description ?? checked.report.intervalMisses.first.map { "\($0)" }
                if feasible, let cameraChoices, checked.consoleProgram.shooting.timing != nil,
                    case .failure(let problem) = ExposurePlan.make(program: checked.program, camera: cameraChoices)
                {
                    feasible = false
                    message = "the camera cannot take it: \(problem)"
                }
                return ProgramEntry(
                    file: file, kind: checked.program.kind.rawValue, steps: checked.program.steps.count,
                    durationSeconds: (checked.report.durationSeconds * 10).rounded() / 10,
                    feasible: feasible, message: message)
            } catch {
                return ProgramEntry(file: file, kind: nil, steps: nil, durationSeconds: nil, feasible: false, message: error.message)
            }
        }
    }

    /// Parses and checks `file` as it would play from `fromStep` (1-based) with the rig at
    /// `startPose`. Throws 404 (no such program or step), 400 (a bad name) or 422 (a
    /// malformed file). An infeasible program is returned with its report: the caller
    /// refuses it.
    public func load(_ file: String, fromStep: Int, startPose: [Double]) throws(ServeError) -> Checked {
        guard let directory else { throw ServeError(.notFound, "the server has no --programs directory") }
        guard Self.isPlainName(file), file.hasSuffix(".json") else {
            throw ServeError(.badRequest, "program: a file name in the programs directory, such as pano.json")
        }
        let path = directory + "/" + file
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path),
            attributes[.type] as? FileAttributeType == .typeRegular
        else {
            throw ServeError(.notFound, "no program \(file) in \(directory)")
        }
        let stamp = "\(attributes[.modificationDate] ?? "")|\(attributes[.size] ?? "")|\(fromStep)|\(startPose)"
        if let hit = cache.withLock({ $0[file] }), hit.stamp == stamp { return hit }
        let text: String
        do {
            // The hardened reader: bounded in size, regular files only, UTF-8 checked.
            text = try RigFileReader.readText(path)
        } catch {
            throw ServeError(.unprocessableContent, error.description)
        }
        let prepared: (program: Program, console: HostedProgram, report: FeasibilityReport)
        do {
            // A program that embeds another rig is laid out on that rig's axes: played on
            // the served rig it would move the wrong axes, or index past them.
            prepared = try ServedProgram.prepare(
                text: text, file: file, served: rig, rigText: rigText, rigPath: rigPath, fromStep: fromStep, startPose: startPose,
                cameraReportsShots: cameraReportsShots)
        } catch {
            switch error {
            case .malformed(let m), .notPlayable(let m): throw ServeError(.unprocessableContent, m)
            case .badStep(let m): throw ServeError(.badRequest, m)
            case .noSuchStep(let m): throw ServeError(.notFound, m)
            }
        }
        let (program, console, report) = prepared
        if let problem = cameraProblem(program) {
            throw ServeError(.unprocessableContent, "\(file): not playable with the rig's camera: \(problem)")
        }
        let checked = Checked(program: program, consoleProgram: console, report: report, sha256: SHA256.hex(Data(text.utf8)), stamp: stamp)
        cache.withLock { $0[file] = checked }
        return checked
    }

    /// Seconds the run should take, for the ETA: the check's duration (every step advanced
    /// at once) plus the interval waits; nil when a person advances each step.
    public static func estimatedSeconds(_ checked: Checked) -> Double? {
        let steps = checked.program.steps.count
        switch checked.program.trigger {
        case _ where steps == 0: return checked.report.durationSeconds
        case .auto: return checked.report.durationSeconds
        // The check paces an interval program as it plays: its duration is the run's.
        case .interval: return checked.report.durationSeconds
        default: return nil
        }
    }

    /// A name with no path in it.
    static func isPlainName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 255 && !name.contains("/") && name != "." && name != ".." && !name.hasPrefix(".")
    }

    /// The rig file itself may sit among the programs: it is not listed.
    static func isRig(at path: String) -> Bool {
        guard let text = try? RigFileReader.readText(path), let root = try? JSONParser.parse(text), case .object(let members) = root.value
        else { return false }
        return members.contains { $0.key == "axes" } && !members.contains { $0.key == "kind" }
    }
}

extension Error {
    /// The message of a `ServeError`, else the error's description.
    var message: String { (self as? ServeError)?.message ?? "\(self)" }
}
