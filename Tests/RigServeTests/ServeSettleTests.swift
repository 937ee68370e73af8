import Foundation
import RigTestSupport
import Testing

/// A `"liveView"` settle in programs played through `rig serve` (the real binary): the
/// simulated camera's live view, drawn where the ringing payload points, measures every
/// step as in `rig play`, and is joined only while a program plays.
@Suite struct ServeSettleTests {
    @Test func servedProgramsWaitForTheLiveViewToBeStillAndAnIdleServerWatchesNothing() async throws {
        let rig = #"""
            {"axes": [{"name": "pan", "channel": 0, "pulseUs": [1000, 2000], "angleDeg": [-45, 45], "softLimits": [-40, 40],
                       "maxVelocity": 40, "maxAcceleration": 120, "payload": {"frequencyHz": 3, "damping": 0.03}}],
             "output": {"type": "sim", "frequencyHz": 200},
             "camera": {"type": "sim", "focusMs": 0, "shutterMs": 50, "afterShotMs": 0,
                        "preview": {"fps": 20, "width": 160, "height": 120, "fovDeg": 50}},
             "settle": {"sensor": "liveView", "thresholdDegPerS": 2, "holdSeconds": 0.25, "timeoutSeconds": 15}}
            """#
        let program = #"{"rig": "rig.json", "kind": "steps", "trigger": "auto", "steps": [{"pose": {"pan": 10}}, {"pose": {"pan": -2}}, {"pose": {"pan": 8}}]}"#
        let server = try await ServeProcess(rig: rig, programs: ["three.json": program])
        defer { server.stop() }
        #expect(server.log.contains("settle: measured in the camera's live view while a program plays"), "\(server.log)")
        // Idle: nobody watches the camera's live view.
        let (_, idle) = try await server.request("GET", "/api/status")
        #expect(ServeLiveViewTests.liveView(idle)?["viewers"] as? Int == 0, "\(idle)")

        let (status, reply) = try await server.request("POST", "/api/play", body: #"{"program": "three.json"}"#)
        #expect(status == 202, "\(reply)")
        let ended = try? await poll(for: .seconds(180)) {
            server.log.contains("step 3/3 measured still") || server.log.contains("step 3/3 not measured") ? true : nil
        }
        try #require(ended == true, "\(server.log)")
        #expect(server.log.contains("three.json: settle measured in the sim camera's live view"), "\(server.log)")
        let verdicts = server.log.split(separator: "\n").filter { $0.contains("measured still") }
        #expect(verdicts.count >= 3, "\(server.log)")
        #expect(!verdicts.contains { $0.contains("not measured still") }, "\(server.log)")
        // The program ended: the live view is left again.
        try await server.waitStatus { json in
            json["state"] as? String == "idle" && ServeLiveViewTests.liveView(json)?["viewers"] as? Int == 0
        }
    }
}
