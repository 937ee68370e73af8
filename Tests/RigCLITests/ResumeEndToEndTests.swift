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

    /// A power cut just before the line break of step 3's `shot` line: `export` and
    /// `--resume` both read that line as torn (the writer moves it to LOG.torn), so export
    /// names two images and the resumed run shoots step 3 again, not step 4 onwards.
    @Test(.blocking) func aShotLineThatLostOnlyItsLineBreakIsShotAgainAndNotExported() throws {
        let programPath = try RigProcess.temporaryFile("pano.json", contents: Self.program)
        let logPath = (programPath as NSString).deletingLastPathComponent + "/run.jsonl"
        let full = try RigProcess.run(["play", programPath, "--log", logPath, "--no-realtime", "--speed", "5"])
        #expect(full.status == 0, "\(full.stderr)")
        let text = try String(contentsOfFile: logPath, encoding: .utf8)
        let lines = text.split(separator: "\n")
        let third = try #require(lines.firstIndex { $0.contains(#""event":"shot","step":3"#) })
        try (lines[...third].joined(separator: "\n")).write(toFile: logPath, atomically: true, encoding: .utf8)

        let csv = try RigProcess.run(["export", logPath, "--format", "csv", "--hfov", "60"])
        #expect(csv.status == 0, "\(csv.stderr)")
        #expect(csv.stderr.contains("the last line is cut short"), "\(csv.stderr)")
        #expect(csv.stdout.split(separator: "\n").count == 3, "a header and steps 1 and 2: \(csv.stdout)")

        let resumed = try RigProcess.run(["play", programPath, "--resume", "--log", logPath, "--no-realtime", "--speed", "5"])
        #expect(resumed.status == 0, "\(resumed.stderr)")
        #expect(resumed.stdout.contains("resuming \(logPath) at step 3 of 6"), "\(resumed.stdout)")
        #expect(try String(contentsOfFile: logPath + ".torn", encoding: .utf8) == lines[third] + "\n")
        let log = try readLog(logPath)
        #expect(log.isFinished)
        #expect(log.shots.map(\.step) == Array(1...6))
    }

    @Test(.blocking) func fromStepStartsThereAndTheIntervalCheckNamesTheStep() throws {
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
        #expect(check.stderr.contains("error: 5 steps cannot keep their interval (steps 2–6); the worst: step "), "\(check.stderr)")
        #expect(check.stderr.contains("the interval is 1 s"))
    }

    /// A rig file beside a two-step program whose camera takes 10 s per shot, so a stop
    /// lands inside the first shot however slow the machine is.
    static func slowShotProgram() throws -> (program: String, rig: String, dir: String) {
        let programPath = try RigProcess.temporaryFile(
            "slow.json",
            contents: #"""
                {"rig": "rig.json", "kind": "steps", "trigger": "auto", "settleSeconds": 0.1,
                 "steps": [{"pose": {"pan": -10}, "label": "a"}, {"pose": {"pan": 10}, "label": "b"}]}
                """#)
        let dir = (programPath as NSString).deletingLastPathComponent
        let rig = dir + "/rig.json"
        try #"""
        {"axes": [{"name": "pan", "channel": 0}, {"name": "tilt", "channel": 1}],
         "camera": {"type": "sim", "focusMs": 100, "shutterMs": 10000, "afterShotMs": 100}}
        """#.write(toFile: rig, atomically: true, encoding: .utf8)
        return (programPath, rig, dir)
    }

    /// A stop while the camera is exposing: the log counts the take (`interrupted`), so
    /// export numbers the files as the camera did; `--resume` shoots that step again; a
    /// rig that now points its axes differently is refused until `--rig-changed`.
    @Test func aStopDuringAShotIsLoggedAndAChangedRigIsRefused() async throws {
        let (programPath, rigPath, dir) = try Self.slowShotProgram()
        let logPath = dir + "/run.jsonl"
        let (process, out, err) = try RigProcess.start(["play", programPath, "--log", logPath, "--no-realtime"])
        let stdout = PipeCollector(out)
        let stderr = PipeCollector(err)
        _ = try await poll(for: .seconds(60)) { stdout.text.contains("📷 step 1/2") ? true : nil }
        process.terminate()
        process.waitUntilExit()
        stdout.waitForEnd()
        stderr.waitForEnd()
        #expect(process.terminationStatus == 0, "\(stderr.text)")
        #expect(stdout.text.contains("(0 shots, 1 interrupted)"), "\(stdout.text)")

        let stopped = try readLog(logPath)
        #expect(stopped.shots.map(\.step) == [1])
        #expect(stopped.shots.first?.interrupted == true)
        #expect(stopped.completeShots.isEmpty)
        #expect(stopped.resumeStep() == 1)
        #expect(stopped.lastStart?.rigPointing.map(\.axis) == ["pan", "tilt"])

        // The pan servo turned round ("inverted"): the rest would be shot mirrored.
        let rig = try String(contentsOfFile: rigPath, encoding: .utf8)
        try rig.replacingOccurrences(of: #""channel": 0}"#, with: #""channel": 0, "inverted": true}"#)
            .write(toFile: rigPath, atomically: true, encoding: .utf8)
        let refused = try RigProcess.run(["play", programPath, "--resume", "--log", logPath, "--no-realtime", "--no-shoot"])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("the rig changed since the run in \(logPath)"), "\(refused.stderr)")
        #expect(
            refused.stderr.contains(
                #"axis "pan" was servo on channel 0, -90° at 1000 µs, 90° at 2000 µs, now servo on channel 0, -90° at 2000 µs, 90° at 1000 µs"#),
            "\(refused.stderr)")
        #expect(!refused.stderr.contains(#"axis "tilt""#))
        #expect(try readLog(logPath) == stopped, "a refused resume writes nothing")

        let resumed = try RigProcess.run(["play", programPath, "--resume", "--rig-changed", "--log", logPath, "--no-realtime", "--no-shoot"])
        #expect(resumed.status == 0, "\(resumed.stderr)")
        #expect(resumed.stdout.contains("resuming \(logPath) at step 1 of 2"), "\(resumed.stdout)")
        #expect(resumed.stderr.contains("warning: --rig-changed: axis \"pan\" was"))
        let log = try readLog(logPath)
        #expect(log.isFinished)
        #expect(log.completeShots.map(\.step) == [1, 2])
        #expect(log.completeShots.allSatisfy { !$0.redo })

        // The camera numbered the interrupted take too: step 1's frame is the second file.
        let csv = try RigProcess.run(["export", logPath, "--format", "csv", "--hfov", "60"])
        #expect(csv.status == 0, "\(csv.stderr)")
        #expect(csv.stdout.contains("IMG_0002.JPG") && csv.stdout.contains("IMG_0003.JPG") && !csv.stdout.contains("IMG_0001.JPG"), "\(csv.stdout)")
    }

    /// A disk that fills up mid-run (the file size limit, `ulimit -f`, gives the same
    /// EFBIG a full disk gives ENOSPC): the live view and exit 1 say the log is
    /// incomplete, and the log ends on a whole line, readable and resumable.
    @Test(.blocking) func aShotLogThatCannotBeWrittenEndsTheRunWithExit1AndStaysWhole() throws {
        let steps = (0..<80).map { "{\"pose\": {\"pan\": \(Double($0) * 0.25)}}" }.joined(separator: ", ")
        let programPath = try RigProcess.temporaryFile(
            "many.json",
            contents: """
                {"rig": {"axes": [{"name": "pan", "channel": 0, "maxVelocity": 500, "maxAcceleration": 5000}]},
                 "kind": "steps", "trigger": "auto", "settleSeconds": 0, "steps": [\(steps)]}
                """)
        let logPath = (programPath as NSString).deletingLastPathComponent + "/run.jsonl"
        // SIGXFSZ ignored (as the kernel's default would kill): writes past the limit fail.
        let shell = URL(fileURLWithPath: "/bin/sh")
        let result = try RigProcess.run(
            ["-c", #"trap "" XFSZ; ulimit -f 8; exec "$0" "$@""#, RigProcess.executable.path, "play", programPath, "--log", logPath, "--no-realtime"],
            program: shell)
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stdout.contains("⚠ shot log INCOMPLETE"), "\(result.stdout)")
        #expect(result.stderr.contains("error: writing the shot log \(logPath) failed"), "\(result.stderr)")
        let data = try Data(contentsOf: URL(fileURLWithPath: logPath))
        #expect(data.last == UInt8(ascii: "\n"), "the log ends on a whole line")
        let log = try readLog(logPath)
        #expect(log.tornLastLine == nil)
        #expect(log.shots.count > 0 && log.shots.count < 80, "\(log.shots.count) shots")
        #expect(log.shots.map(\.step) == Array(1...log.shots.count))
    }
}
