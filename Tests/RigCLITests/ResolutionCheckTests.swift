import Foundation
import RigTestSupport
import Testing

/// `rig check` reports what one output count is worth, and warns about timelapses that
/// move an axis less than a count on some frames.
@Suite struct ResolutionCheckTests {
    @Test(.blocking) func aRigFileReportsItsCountSizes() throws {
        let pca = try RigProcess.run(["check", "rigs/pantilt-pca9685.json"])
        #expect(pca.status == 0, "\(pca.stderr)")
        // 50 Hz on 25 MHz: PRE_SCALE 121, a count is 122/25 µs; 180° over 1000 µs.
        #expect(pca.stdout.contains("  resolution per output count (pca9685 at 50.03 Hz): pan 4.88 µs ≈ 0.878°, tilt 4.88 µs ≈ 0.878°\n"), "\(pca.stdout)")
        let sim = try RigProcess.run(["check", "rigs/pantilt.json"])
        #expect(sim.stdout.contains("  resolution: continuous (the sim output has no steps)\n"), "\(sim.stdout)")
    }

    /// A measured settle: one line per step with the settle the payload is expected to take
    /// (named once), and the fixed settle where the ringing outlasts the timeout.
    @Test(.blocking) func aMeasuredSettleIsForecastPerStep() throws {
        let program = try RigProcess.temporaryFile(
            "settled.json",
            contents: """
                {"rig": {"output": {"type": "sim"}, "settle": {"sensor": "sim", "thresholdDegPerS": 0.5, "holdSeconds": 0.17, "timeoutSeconds": 6},
                         "axes": [{"name": "pan", "channel": 0, "pulseUs": [1000, 2000], "angleDeg": [-90, 90], "maxVelocity": 90,
                                   "maxAcceleration": 300, "payload": {"frequencyHz": 3, "damping": 0.03}}]},
                 "kind": "steps", "trigger": "auto", "settleSeconds": 0.5,
                 "steps": [{"pose": {"pan": 10}}, {"pose": {"pan": 10.01}, "label": "tiny"}]}
                """)
        let result = try RigProcess.run(["check", program])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        let header = try #require(lines.firstIndex { $0.hasPrefix("\(program): settle measured by sim: still below 0.5 °/s for 0.17 s, timeout 6 s") })
        // A 10° move at 300 °/s² rings the 3 Hz payload past the 6 s timeout: the fixed settle.
        #expect(lines[header + 1].hasPrefix("  step 1: 6.00 s (not still within the timeout: the fixed 0.5 s settle)"), "\(result.stdout)")
        // A 0.01° move barely rings: measured still within the hold and a little more.
        let tiny = lines[header + 2]
        #expect(tiny.hasPrefix("  step 2 tiny: "), "\(result.stdout)")
        #expect(!tiny.contains("not still"), "\(tiny)")
    }

    /// A shaped axis tells the loop the ringing's frequency: stillness is then judged by the
    /// ringing's envelope, not the hold, and the header says so (it named a hold no step used).
    @Test(.blocking) func aShapedRigsSettleIsSaidToBeJudgedByTheEnvelope() throws {
        func rig(shaper: String) -> String {
            """
            {"rig": {"output": {"type": "sim"}, "settle": {"sensor": "sim", "thresholdDegPerS": 0.5, "holdSeconds": 0.17, "timeoutSeconds": 6},
                     "axes": [{"name": "pan", "channel": 0, "pulseUs": [1000, 2000], "angleDeg": [-90, 90], "maxVelocity": 90,
                               "maxAcceleration": 300, "payload": {"frequencyHz": 3, "damping": 0.03}\(shaper)}]},
             "kind": "steps", "trigger": "auto", "settleSeconds": 0.5, "steps": [{"pose": {"pan": 10}}]}
            """
        }
        let shaped = try RigProcess.run(
            ["check", try RigProcess.temporaryFile("shaped.json", contents: rig(shaper: #", "shaper": {"type": "zv", "frequencyHz": 3, "damping": 0.03}"#))])
        #expect(shaped.status == 0, "\(shaped.stderr)")
        #expect(
            shaped.stdout.contains("settle measured by sim: still the ringing's envelope (at the shapers' 3 Hz) below 0.5 °/s, no hold, timeout 6 s"),
            "\(shaped.stdout)")
        #expect(!shaped.stdout.contains("for 0.17 s"), "\(shaped.stdout)")
        // Unshaped, the hold decides and is named.
        let plain = try RigProcess.run(["check", try RigProcess.temporaryFile("plain.json", contents: rig(shaper: ""))])
        #expect(plain.stdout.contains("settle measured by sim: still below 0.5 °/s for 0.17 s, timeout 6 s"), "\(plain.stdout)")
    }

    @Test(.blocking) func aSlowTimelapseOnAPCA9685IsWarnedAboutButStillFeasible() throws {
        let program = try RigProcess.temporaryFile(
            "slow.json",
            contents: """
                {"rig": {"output": {"type": "pca9685", "frequencyHz": 50},
                         "axes": [{"name": "pan", "channel": 0, "pulseUs": [1000, 2000], "angleDeg": [-90, 90], "softLimits": [-90, 90]}]},
                 "kind": "timelapse", "trigger": "auto",
                 "timelapse": {"frames": 41, "keyframes": {"pan": [{"frame": 0, "value": 0, "interp": "linear"}, {"frame": 40, "value": 10}]}}}
                """)
        let result = try RigProcess.run(["check", program])
        #expect(result.status == 0, "\(result.stderr)")
        let warning = try #require(
            result.stdout.split(separator: "\n").first { $0.hasPrefix("\(program): warning: axis pan moves less than one output count (0.88°)") })
        #expect(warning.contains("smallest move 0.25° per frame"))
        #expect(warning.contains("a higher \"frequencyHz\""))
        #expect(warning.contains("a wider calibration"))
    }

    /// A stepped sky track stair-steps the same way: the Milky Way example (a frame every
    /// 30 s, the core moving about 0.1° between frames) on the PCA9685 head.
    @Test(.blocking) func aMilkyWayTrackOnAPCA9685IsWarnedAbout() throws {
        let text = try String(contentsOf: RigProcess.packageRoot.appendingPathComponent("rigs/milkyway-track.json"), encoding: .utf8)
            .replacingOccurrences(of: #""rig": "pantilt.json""#, with: #""rig": "\#(RigProcess.packageRoot.path)/rigs/pantilt-pca9685.json""#)
        let program = try RigProcess.temporaryFile("milkyway.json", contents: text)
        let result = try RigProcess.run(["check", program])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(
            result.stdout.split(separator: "\n").contains { $0.hasPrefix("\(program): warning: axis pan moves less than one output count") },
            "\(result.stdout)")
        // The same track on the simulated rig has no counts to stall.
        let sim = try RigProcess.run(["check", "rigs/milkyway-track.json"])
        #expect(sim.status == 0 && !sim.stdout.contains("less than one output count"), "\(sim.stdout)\(sim.stderr)")
    }

    /// A continuous sky track (keyframes played, for video) stair-steps too: judged a
    /// second at a time by the same check; on the simulated rig, nothing to warn of.
    @Test(.blocking) func aContinuousTrackOnAPCA9685IsWarnedAbout() throws {
        func track(_ rig: String) -> String {
            """
            {"rig": "\(RigProcess.packageRoot.path)/rigs/\(rig)", "kind": "track",
             "site": {"latitude": 28.7606, "longitude": -17.8814, "elevationM": 2396},
             "track": {"target": "galacticCentre", "start": "2026-07-15T22:00:00Z", "durationSeconds": 3600,
                       "mount": {"azimuthAxis": "pan", "altitudeAxis": "tilt", "northDeg": 180}}}
            """
        }
        let program = try RigProcess.temporaryFile("milkyway-video.json", contents: track("pantilt-pca9685.json"))
        let result = try RigProcess.run(["check", program])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        let warning = try #require(
            result.stdout.split(separator: "\n").first { $0.hasPrefix("\(program): warning: axis pan moves less than one output count (0.88°) in ") },
            "\(result.stdout)")
        #expect(warning.contains("moving seconds") && warning.contains("per second; at 0–"), "\(warning)")
        #expect(warning.contains("so the video stutters"), "\(warning)")
        #expect(warning.contains("a stepped track"), "\(warning)")
        let onSim = try RigProcess.temporaryFile("milkyway-video-sim.json", contents: track("pantilt.json"))
        let sim = try RigProcess.run(["check", onSim])
        #expect(sim.status == 0 && !sim.stdout.contains("less than one output count"), "\(sim.stdout)\(sim.stderr)")
    }
}
