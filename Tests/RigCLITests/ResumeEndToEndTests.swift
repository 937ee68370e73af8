import Foundation
import RigCore
import RigTestSupport
import Testing

/// A stepped run stopped by SIGTERM at a middle step, then resumed with the real binary:
/// the shot log says where it stopped, and `--resume` shoots the rest into the same log.
@Suite(.serialized) struct ResumeEndToEndTests {
    static let program = #"""
        {"rig": {"axes": [{"name": "pan", "channel": 0, "backlashDeg": 1}, {"name": "tilt", "channel": 1}],
                 "camera": {"type": "sim", "focusMs": 100, "shutterMs": 100, "afterShotMs": 200}},
         "kind": "steps", "trigger": "auto", "settleSeconds": 0.3,
         "steps": [{"pose": {"pan": -30}, "label": "a"}, {"pose": {"pan": -15}, "label": "b"}, {"pose": {"pan": 0}, "label": "c"},
                   {"pose": {"pan": 15}, "label": "d"}, {"pose": {"pan": 30}, "label": "e"}, {"pose": {"pan": 30, "tilt": 10}, "label": "f"}]}
        """#

    func readLog(_ path: String) throws -> ShotLog {
        try ShotLog(text: String(contentsOfFile: path, encoding: .utf8), file: path)
    }

    @Test func aRunStoppedMidwayResumesAfterItsLastShotInTheSameLog() async throws {
        let programPath = try RigProcess.temporaryFile("pano.json", contents: Self.program)
        let logPath = (programPath as NSString).deletingLastPathComponent + "/run.jsonl"
        // Keyboard on a terminal: the run waits at each step, so SIGTERM lands at step 2 however
        // slow the machine is.
        let rig = try TerminalProcess(["play", programPath, "--trigger", "keyboard", "--log", logPath, "--no-realtime"])
        _ = try await poll { rig.stdout.count("step 1 of 6 ready") >= 1 ? true : nil }
        rig.type("\r")
        _ = try await poll { rig.stdout.count("step 2 of 6 ready") >= 1 ? true : nil }
        rig.process.terminate()
        rig.process.waitUntilExit()
        #expect(rig.process.terminationStatus == 0, "\(rig.stderr.text)")

        let stopped = try readLog(logPath)
        let end = try #require(stopped.lastRunEnd)
        #expect(end.reason == .stopped)
        let last = try #require(end.lastStep)
        #expect(last == 2, "stopped at the middle step it was waiting at")
        #expect(stopped.shots.map(\.step) == Array(1...last))
        #expect(stopped.lastStart?.programSha256 == SHA256.hex(Array(Self.program.utf8)))

        let resumed = try RigProcess.run(["play", programPath, "--resume", "--log", logPath, "--no-realtime"])
        #expect(resumed.status == 0, "\(resumed.stderr)")
        #expect(resumed.stdout.contains("resuming \(logPath) at step \(last + 1) of 6"))
        let log = try readLog(logPath)
        #expect(log.isFinished)
        #expect(log.lastStart?.fromStep == last + 1)
        // Every step shot exactly once across both runs, in order, at its pose, none a redo.
        #expect(log.shots.map(\.step) == Array(1...6))
        #expect(log.shots.map(\.label) == ["a", "b", "c", "d", "e", "f"])
        #expect(log.shots.allSatisfy { !$0.redo })
        #expect(log.shots.last?.pose == [30, 10])
        #expect(log.events.filter { if case .start = $0 { true } else { false } }.count == 2)

        // Nothing left to resume; and a changed program is refused before anything moves.
        let again = try RigProcess.run(["play", programPath, "--resume", "--log", logPath, "--no-realtime"])
        #expect(again.status == 1)
        #expect(again.stderr.contains("nothing to resume"))
        try (Self.program.replacingOccurrences(of: "\"pan\": 30, \"tilt\": 10", with: "\"pan\": 31, \"tilt\": 10"))
            .write(toFile: programPath, atomically: true, encoding: .utf8)
        let changed = try RigProcess.run(["play", programPath, "--resume", "--log", logPath, "--no-realtime"])
        #expect(changed.status == 1)
        #expect(changed.stderr.contains("changed since the run in \(logPath)"), "\(changed.stderr)")
    }

    @Test func fromStepStartsThereAndTheIntervalCheckNamesTheStep() throws {
        let programPath = try RigProcess.temporaryFile("pano.json", contents: Self.program)
        let logPath = (programPath as NSString).deletingLastPathComponent + "/run.jsonl"
        let result = try RigProcess.run(["play", programPath, "--from-step", "5", "--log", logPath, "--no-realtime", "--speed", "5"])
        #expect(result.status == 0, "\(result.stderr)")
        let log = try readLog(logPath)
        #expect(log.shots.map(\.step) == [5, 6])
        #expect(log.lastStart?.fromStep == 5)

        // Step 1 → 2 is 15° (about 0.6 s of move) + 0.3 s settle + 0.2 s shot: 1 s cannot hold.
        let check = try RigProcess.run(["play", programPath, "--trigger", "interval:1", "--no-realtime"])
        #expect(check.status == 1)
        #expect(check.stderr.contains("error: step 2 (b) needs 1."), "\(check.stderr)")
        #expect(check.stderr.contains("the interval is 1 s"))
    }
}
