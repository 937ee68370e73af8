import Foundation
import RigCore
import RigTestSupport
import Testing

@testable import RigRuntime

/// `--resume` without `--log` looks in the state directory, where logs are named by the
/// program's file name only: two programs of the same name (`a/pano.json`, `b/pano.json`)
/// share a prefix there, and each must find its own run.
@Suite struct ResumeLookupTests {
    let root: URL
    let runs: RunLogDirectory

    init() throws {
        root = try TestTools.temporaryDirectory()
        runs = RunLogDirectory(stateDirectory: root.appendingPathComponent("state").path)
        try FileManager.default.createDirectory(atPath: runs.path, withIntermediateDirectories: true)
    }

    /// A program file `name` in the folder `folder`, and its SHA-256.
    func program(_ folder: String, _ text: String) throws -> (path: String, sha: String) {
        let dir = root.appendingPathComponent(folder)
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let path = dir.appendingPathComponent("pano.json").path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return (path, SHA256.hex(Array(text.utf8)))
    }

    /// A log of `program` begun at `minute` past a fixed hour, with shots of steps 1…`shot`,
    /// ended `done` when `finished`. `recordPath`: false writes a log as older rigs did.
    @discardableResult
    func log(_ program: (path: String, sha: String), minute: Int, shot: Int, finished: Bool = false, recordPath: Bool = true) throws -> String {
        let path = runs.newLogPath(program: program.path, at: Date(timeIntervalSince1970: 1_800_000_000 + Double(minute) * 60))
        var events: [ShotLogEvent] = [
            .start(
                ShotLogStart(program: program.path, programPath: recordPath ? OutputPath.canonical(program.path) : nil, programSha256: program.sha, steps: 3))
        ]
        for step in 1...shot {
            events.append(.shot(ShotLogShot(step: step, label: "\(step)", axisNames: ["pan"], pose: [0], startSeconds: 1, endSeconds: 2)))
        }
        events.append(.end(ShotLogEnd(reason: finished ? .done : .stopped, lastStep: shot)))
        try ShotLog(events: events).text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    func find(_ program: (path: String, sha: String)) throws -> ResumeLookup.Found {
        try ResumeLookup.find(program: program.path, sha256: program.sha, stepCount: 3, logPath: nil, directory: runs)
    }

    @Test func eachProgramOfTheSameNameResumesItsOwnLog() throws {
        let a = try program("a", #"{"a": 1}"#)
        let b = try program("b", #"{"b": 2}"#)
        let aLog = try log(a, minute: 1, shot: 1)
        let bLog = try log(b, minute: 2, shot: 2)
        // b's log is the newest "pano-…" log: a is not refused as "changed" because of it.
        #expect(try find(a).path == aLog)
        #expect(try find(a).firstStep == 1)
        #expect(try find(b).path == bLog)
        #expect(try find(b).firstStep == 2)
    }

    @Test func anOlderUnfinishedRunIsTriedWhenTheNewestFinished() throws {
        let a = try program("a", #"{"a": 1}"#)
        let unfinished = try log(a, minute: 1, shot: 2)
        try log(a, minute: 2, shot: 3, finished: true)
        #expect(try find(a).path == unfinished)
    }

    @Test func aFinishedOrChangedProgramIsRefusedWithItsOwnReason() throws {
        let a = try program("a", #"{"a": 1}"#)
        let b = try program("b", #"{"b": 2}"#)
        try log(a, minute: 1, shot: 3, finished: true)
        try log(b, minute: 2, shot: 1)
        #expect {
            try find(a)
        } throws: { error in
            "\(error)".contains("finished all its steps: nothing to resume")
        }
        // a edited since its run: refused as changed (b's log has nothing to do with it).
        let edited = try program("a", #"{"a": 3}"#)
        try log(a, minute: 3, shot: 1)
        #expect {
            try find(edited)
        } throws: { error in
            "\(error)".contains("changed since the run") && "\(error)".contains("/pano-") && !"\(error)".contains(b.path)
        }
        // No run of a third pano.json at all.
        let c = try program("c", #"{"c": 4}"#)
        #expect {
            try find(c)
        } throws: { error in
            "\(error)".contains("no run of \(c.path) to resume")
        }
    }

    @Test func aLogWrittenBeforeThePathWasRecordedIsFoundByItsContent() throws {
        let a = try program("a", #"{"a": 1}"#)
        let b = try program("b", #"{"b": 2}"#)
        let aLog = try log(a, minute: 1, shot: 1, recordPath: false)
        try log(b, minute: 2, shot: 1, recordPath: false)
        #expect(try find(a).path == aLog)
    }
}
