import FoundationEssentials
import Glibc
import RigCore
import RigFormat
import SystemPackage

/// Where `rig play` keeps its shot logs (`<state directory>/runs`) and how it finds the
/// run `--resume` continues.
public struct RunLogDirectory: Sendable {
    public let path: String

    /// - Parameter stateDirectory: rig's state directory (`$XDG_STATE_HOME/rig`, …).
    public init(stateDirectory: String) {
        path = FilePath(stateDirectory).appending("runs").string
    }

    /// The program's name in log file names: its file name without `.json`, with
    /// anything but letters, digits, '-', '_' and '.' replaced by '_'.
    public static func programName(_ programPath: String) -> String {
        var name = FilePath(programPath).lastComponent?.string ?? ""
        if name.hasSuffix(".json") { name.removeLast(5) }
        let safe = String(
            name.unicodeScalars.map { s -> Character in
                s.properties.isAlphabetic || ("0"..."9").contains(s) || s == "-" || s == "_" || s == "." ? Character(s) : "_"
            })
        return safe.isEmpty ? "program" : safe
    }

    /// A new log's path: `<program>-<UTC time>.jsonl` (`pano-20261123T203154Z.jsonl`);
    /// the time sorts by name, so the newest run is the last name.
    public func newLogPath(program: String, at date: Date = Date()) -> String {
        let stamp = Self.fileStamp(date)
        var candidate = FilePath(path).appending("\(Self.programName(program))-\(stamp).jsonl").string
        var n = 2
        while FileManager.default.fileExists(atPath: candidate) {
            candidate = FilePath(path).appending("\(Self.programName(program))-\(stamp)-\(n).jsonl").string
            n += 1
        }
        return candidate
    }

    /// The logs of `program` in this directory, newest first.
    public func logs(of program: String) -> [String] {
        let prefix = Self.programName(program) + "-"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
        return names.filter { $0.hasPrefix(prefix) && $0.hasSuffix(".jsonl") && Self.isStamp($0.dropFirst(prefix.count)) }
            .sorted(by: >)
            .map { FilePath(path).appending($0).string }
    }

    static func isStamp(_ rest: Substring) -> Bool {
        // 20261123T203154Z[-n].jsonl: keeps "pano-wide" logs out of "pano"'s.
        let stamp = rest.prefix(16)
        return stamp.count == 16 && stamp.dropFirst(8).first == "T" && stamp.last == "Z"
            && stamp.prefix(8).allSatisfy(\.isNumber) && stamp.dropFirst(9).prefix(6).allSatisfy(\.isNumber)
    }

    public static func fileStamp(_ date: Date) -> String {
        let f = UTCTime.fields(date.timeIntervalSince1970)
        return f.date.filter { $0 != "-" } + "T" + zeroPadded(f.hour, 2) + zeroPadded(f.minute, 2) + zeroPadded(f.second, 2) + "Z"
    }

    public static func isoStamp(_ date: Date) -> String {
        UTCTime.isoSeconds(date.timeIntervalSince1970)
    }
}

/// The run `--resume` continues, or why there is none.
public enum ResumeLookup {
    public struct Found: Sendable {
        public var path: String
        public var log: ShotLog
        /// 0-based step to start at.
        public var firstStep: Int
        /// What changed in the rig since the run, one line per axis (accepted with
        /// `acceptRigChange`); empty when nothing did.
        public var rigChanges: [String] = []

        /// Refuses a run whose rig pointed its axes differently, unless `acceptRigChange`.
        func checked(rigPointing: [AxisPointing], acceptRigChange: Bool) throws -> Found {
            guard let start = log.lastStart else { return self }
            var found = self
            found.rigChanges = ResumeLookup.rigChanges(from: start.rigPointing, to: rigPointing)
            if !found.rigChanges.isEmpty, !acceptRigChange {
                throw Refusal(
                    description:
                        "the rig changed since the run in \(path), so the rest of the shoot would point elsewhere: \(found.rigChanges.joined(separator: "; ")). Restore the rig, or give --rig-changed to resume with the new one"
                )
            }
            return found
        }
    }

    public struct Refusal: Error, Sendable, CustomStringConvertible {
        public var description: String
    }

    /// Reads `logPath` (`--log` given), or else the newest unfinished log in `directory`
    /// of this very program file (its real path, as the log's `start` records it; in an
    /// older log, its name and content), and checks it belongs to the program as it is now
    /// (`sha256`). Another program's log of the same name is never taken.
    /// A run whose rig pointed its axes differently (``Rig/pointing``: a channel, the
    /// calibration, `inverted`) is refused unless `acceptRigChange`, naming each change.
    /// - Parameter framesPerStep: the program's frames per step (a bracket's count): a step
    ///   that lacks one is shot again whole.
    public static func find(
        program: String, sha256: String, stepCount: Int, framesPerStep: Int = 1, logPath: String?,
        directory: RunLogDirectory?, rigPointing: [AxisPointing] = [], acceptRigChange: Bool = false
    ) throws -> Found {
        if let logPath {
            let log = try read(logPath)
            return try resumable(log, at: logPath, program: program, sha256: sha256, stepCount: stepCount, framesPerStep: framesPerStep)
                .checked(rigPointing: rigPointing, acceptRigChange: acceptRigChange)
        }
        let place = directory.map { " in \($0.path)" } ?? " (no state directory: set XDG_STATE_HOME or HOME)"
        let real = OutputPath.canonical(program)
        var firstRefusal: Refusal?
        for path in directory?.logs(of: program) ?? [] {
            // A log that cannot be read is no run of this program's to resume.
            guard let log = try? read(path), let start = log.lastStart, belongs(start, to: real, sha256: sha256) else { continue }
            let found: Found
            do { found = try resumable(log, at: path, program: program, sha256: sha256, stepCount: stepCount, framesPerStep: framesPerStep) } catch {
                // Finished, or of the file as it was: an older unfinished run of it may still be resumed.
                firstRefusal = firstRefusal ?? error
                continue
            }
            return try found.checked(rigPointing: rigPointing, acceptRigChange: acceptRigChange)
        }
        throw firstRefusal ?? Refusal(description: "no run of \(program) to resume\(place); give its log with --log FILE")
    }

    /// True when the run `start` began was of the program file at `realPath`: its recorded
    /// real path, or (an older log) the program as given, or the same bytes.
    static func belongs(_ start: ShotLogStart, to realPath: String, sha256: String) -> Bool {
        if let recorded = start.programPath { return recorded == realPath }
        return start.programSha256 == sha256 || OutputPath.canonical(start.program) == realPath
    }

    static func read(_ path: String) throws(Refusal) -> ShotLog {
        let text: String
        // The hardened reader: a device, a FIFO or a 64 GB file is refused, not read forever.
        do { text = try RigFileReader.readText(path) } catch {
            throw Refusal(description: "cannot read the shot log: \(error)")
        }
        do { return try ShotLog(text: text, file: path) } catch {
            throw Refusal(description: "\(error)")
        }
    }

    /// Where `log` resumes, or why it cannot.
    static func resumable(_ log: ShotLog, at path: String, program: String, sha256: String, stepCount: Int, framesPerStep: Int) throws(Refusal) -> Found {
        guard let start = log.lastStart else {
            throw Refusal(description: "\(path) holds no run (no \"start\" event)")
        }
        guard start.programSha256 == sha256 else {
            throw Refusal(
                description:
                    "\(program) changed since the run in \(path) (its SHA-256 was \(start.programSha256.prefix(12))…, now \(sha256.prefix(12))…): refusing to resume a different program; restore the file, or play it again without --resume"
            )
        }
        if log.isFinished {
            throw Refusal(description: "the last run of \(program) (\(path)) finished all its steps: nothing to resume")
        }
        let next = log.resumeStep(framesPerStep: framesPerStep)
        guard next <= stepCount else {
            throw Refusal(description: "the run in \(path) shot every frame of its last step (\(stepCount)): nothing to resume")
        }
        return Found(path: path, log: log, firstStep: next - 1)
    }

    /// One line per axis whose pointing differs (added, removed, or changed); nothing
    /// when the log recorded none (an older log).
    static func rigChanges(from old: [AxisPointing], to new: [AxisPointing]) -> [String] {
        guard !old.isEmpty else { return [] }
        var changes: [String] = []
        for was in old {
            guard let now = new.first(where: { $0.axis == was.axis }) else {
                changes.append("axis \"\(elided(was.axis))\" is gone (was \(was.description))")
                continue
            }
            if now != was { changes.append("axis \"\(elided(was.axis))\" was \(was.description), now \(now.description)") }
        }
        for now in new where !old.contains(where: { $0.axis == now.axis }) {
            changes.append("axis \"\(elided(now.axis))\" is new (\(now.description))")
        }
        return changes
    }
}

/// How long a program's frames really held the rig in its last run: each frame from its
/// shot's start (the focus) to its end (a camera that reports files: until it confirmed the
/// file, its card write included), the median over the run's finished frames. What `rig
/// check` and `rig plan` time a shoot with when it is longer than the rig file's timing.
public struct MeasuredFramePace: Sendable, Equatable {
    /// The median frame, in seconds.
    public var medianSeconds: Double
    /// The finished frames it is the median of.
    public var frames: Int
    /// The log it was measured in.
    public var log: String

    /// At least this many finished frames make a pace.
    public static let minimumFrames = 3

    /// From the newest log in `directory` of the program file at `program` (its run, as
    /// `--resume` tells: the same real path, or an older log's same bytes; another program
    /// of the same name is never taken) that has enough finished frames of a camera that
    /// reports them (a frame with a `file`); nil when none has.
    public static func last(of program: String, in directory: RunLogDirectory, newestLogs: Int = 5) -> MeasuredFramePace? {
        let real = OutputPath.canonical(program)
        let sha = SHA256.hex(FileManager.default.contents(atPath: program) ?? Data())
        for path in directory.logs(of: program).prefix(newestLogs) {
            guard let log = try? ResumeLookup.read(path), let start = log.lastStart, ResumeLookup.belongs(start, to: real, sha256: sha)
            else { continue }
            if let pace = measured(log, path: path) { return pace }
        }
        return nil
    }

    static func measured(_ log: ShotLog, path: String) -> MeasuredFramePace? {
        let held = log.completeShots.filter { $0.file != nil }.map { $0.endSeconds - $0.startSeconds }.filter(\.isFinite).sorted()
        guard held.count >= minimumFrames else { return nil }
        let middle = held.count / 2
        let median = held.count % 2 == 1 ? held[middle] : (held[middle - 1] + held[middle]) / 2
        return MeasuredFramePace(medianSeconds: median, frames: held.count, log: path)
    }
}
