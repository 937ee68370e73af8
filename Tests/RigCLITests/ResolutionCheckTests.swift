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

    /// The simulator sends the axes it models (a payload) in a PCA9685's counts at its
    /// `frequencyHz`: `check` says what a count is worth there, and forecasts each step's
    /// measured settle on those counts (at 50 Hz a count's step rings for seconds at 3 Hz;
    /// at 200 Hz on a 200 Hz loop the one-count trim cancels it), as `play` measures it.
    @Test(.blocking) func theSimsCountsAreItsResolutionAndWhatTheSettleForecastRingsOn() throws {
        func program(pwmHz: Int, loopHz: Int) -> String {
            """
            {"rig": {"loopRateHz": \(loopHz), "output": {"type": "sim", "frequencyHz": \(pwmHz)},
                     "settle": {"sensor": "sim", "thresholdDegPerS": 0.5, "holdSeconds": 0.17, "timeoutSeconds": 5},
                     "axes": [{"name": "pan", "channel": 0, "pulseUs": [500, 2500], "angleDeg": [-90, 90], "softLimits": [-85, 85],
                               "maxVelocity": 90, "maxAcceleration": 180, "payload": {"frequencyHz": 3, "damping": 0.03},
                               "shaper": {"type": "zv", "frequencyHz": 3, "damping": 0.03}},
                              {"name": "tilt", "channel": 1, "pulseUs": [1000, 2000], "angleDeg": [-45, 45]}]},
             "kind": "steps", "trigger": "auto", "settleSeconds": 0.5,
             "steps": [{"pose": {"pan": -30}}, {"pose": {"pan": -10}}, {"pose": {"pan": 10}}, {"pose": {"pan": 30}}, {"pose": {"pan": 50}}]}
            """
        }
        func settles(_ stdout: String) -> [Double] {
            stdout.split(separator: "\n").compactMap { line in
                guard line.hasPrefix("  step "), let colon = line.range(of: ": ") else { return nil }
                return Double(line[colon.upperBound...].prefix { $0 != " " })
            }
        }
        let slow = try RigProcess.run(["check", try RigProcess.temporaryFile("sim50.json", contents: program(pwmHz: 50, loopHz: 100))])
        #expect(slow.status == 0, "\(slow.stderr)")
        #expect(slow.stdout.contains("resolution per output count (sim modelling a PCA9685 at 50 Hz): pan 4.88 µs ≈ 0.439°, tilt continuous"), "\(slow.stdout)")
        #expect(slow.stdout.contains("expected per step (on the output's counts at 50.0 Hz):"), "\(slow.stdout)")
        let at50 = settles(slow.stdout)
        #expect(at50.count == 5, "\(slow.stdout)")
        // A count's step (0.44°) at 3 Hz, ζ 0.03 rings above 0.5 °/s for seconds.
        #expect(at50.dropFirst().allSatisfy { $0 > 1 }, "\(slow.stdout)")
        // The shoot is timed with them (7 s of moves and fixed settles without).
        let line = try #require(slow.stdout.split(separator: "\n").first { $0.contains(": shoot: 5 steps, no camera, takes about ") })
        #expect(line.hasSuffix("(moves and settles; each measured settle as expected (rig check lists them))"), "\(line)")
        let total = line.components(separatedBy: "takes about ").last.flatMap { Double($0.prefix { $0.isNumber }) }
        #expect((total ?? 0) > 7 + at50.reduce(0, +) - 5 * 0.5 - 1, "\(line)")
        // A shoot an interval paces keeps the interval's time.
        let pacedProgram = program(pwmHz: 50, loopHz: 100).replacingOccurrences(of: #""auto""#, with: #""interval:30""#)
        let paced = try RigProcess.run(["check", try RigProcess.temporaryFile("sim50-paced.json", contents: pacedProgram)])
        #expect(paced.stdout.contains("takes about 2 min") && !paced.stdout.contains("each measured settle as expected"), "\(paced.stdout)")
        #expect(!paced.stdout.contains("warning: with each step's expected settle"), "\(paced.stdout)")
        // An interval the expected settles cannot keep is warned about (the fixed 0.5 s settles keep it).
        let tight = program(pwmHz: 50, loopHz: 100).replacingOccurrences(of: #""auto""#, with: #""interval:3""#)
        let tightCheck = try RigProcess.run(["check", try RigProcess.temporaryFile("sim50-tight.json", contents: tight)])
        #expect(tightCheck.status == 0, "\(tightCheck.stdout)\(tightCheck.stderr)")
        let warning = "warning: with each step's expected settle (above) instead of its fixed one, 4 steps cannot keep their interval"
        #expect(tightCheck.stdout.contains(warning), "\(tightCheck.stdout)")
        // `rig plan` times the shoot the same way.
        let plan = try RigProcess.run(["plan", try RigProcess.temporaryFile("sim50-plan.json", contents: program(pwmHz: 50, loopHz: 100))])
        let planned = plan.stdout.split(separator: "\n").first { $0.contains(": shoot: 5 steps") }
        func took(_ text: Substring?) -> Substring? { text?.components(separatedBy: "takes about ").last?.prefix(6) }
        #expect(took(planned) != nil && took(planned) == took(line), "\(plan.stdout)")
        let fast = try RigProcess.run(["check", try RigProcess.temporaryFile("sim200.json", contents: program(pwmHz: 200, loopHz: 200))])
        #expect(fast.status == 0, "\(fast.stderr)")
        #expect(fast.stdout.contains("pan 1.22 µs ≈ 0.110°"), "\(fast.stdout)")
        let at200 = settles(fast.stdout)
        #expect(at200.count == 5, "\(fast.stdout)")
        #expect(at200.dropFirst().allSatisfy { $0 < 0.5 }, "\(fast.stdout)")
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
