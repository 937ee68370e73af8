import Foundation
import RigCore
import RigTestSupport
import Testing

/// The keyboard trigger with the real binary on a pseudo-terminal (raw mode, single keys):
/// Enter, `r` redo, `b` back, `h` home, `g N` Enter, `q`, each typed once the rig says it is ready.
@Suite struct KeyboardShootTests {
    static let program = #"""
        {"rig": {"axes": [{"name": "pan", "channel": 0}], "camera": {"type": "sim", "focusMs": 50, "shutterMs": 50, "afterShotMs": 50}},
         "kind": "steps", "trigger": "keyboard", "settleSeconds": 0.05,
         "steps": [{"pose": {"pan": -10}}, {"pose": {"pan": 0}}, {"pose": {"pan": 10}}]}
        """#

    @Test func redoBackHomeGoToAndQuitFromTheKeyboard() async throws {
        let programPath = try RigProcess.temporaryFile("keys.json", contents: Self.program)
        let logPath = (programPath as NSString).deletingLastPathComponent + "/run.jsonl"
        let rig = try TerminalProcess(["play", programPath, "--log", logPath, "--no-realtime"])
        let stdout = rig.stdout
        let stderr = rig.stderr
        let process = rig.process

        // Each key waits for the prompt it answers (the n-th "ready" line).
        var readies = 0
        func type(_ keys: String) async throws {
            readies += 1
            let wanted = readies
            _ = try await poll { stdout.count(" ready: Enter to ") >= wanted ? true : nil }
            rig.type(keys)
        }
        try await type("r")  // step 1 shot → shoot it again
        try await type("\r")  // → step 2
        try await type("b")  // → back to step 1
        try await type("h")  // step 1 shot again → home
        _ = try await poll { stdout.count("at home: Enter to move to step 2 of 3") >= 1 ? true : nil }
        rig.type("\r")  // → step 2, the one after the step it left
        try await type("g3\r")  // → step 3
        try await type("q")  // stop at step 3
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(stderr.text)")
        let log = try ShotLog(text: String(contentsOfFile: logPath, encoding: .utf8), file: logPath)
        #expect(log.shots.map(\.step) == [1, 1, 2, 1, 2, 3])
        #expect(log.shots.map(\.redo) == [false, true, false, true, true, false])
        #expect(log.lastRunEnd?.reason == .stopped)
        #expect(log.finalShots.map(\.step) == [1, 2, 3])
        #expect(stdout.text.contains("r redo · b back · g N go to step N · h home · q stop"))
    }
}
