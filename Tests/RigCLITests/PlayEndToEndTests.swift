import Foundation
import RigCore
import RigFormat
import RigSky
import RigTestSupport
import Testing

/// `rig` run as a user runs it, on the simulated rig.
@Suite struct PlayEndToEndTests {
    func loadProgram(_ relative: String) throws -> Program {
        let path = RigProcess.packageRoot.appendingPathComponent(relative).path
        let text = try String(contentsOfFile: path, encoding: .utf8)
        return try ProgramParser.parse(text: text, file: relative) { rigPath, _ throws(FileError) in
            let full = RigProcess.packageRoot.appendingPathComponent("rigs").appendingPathComponent(rigPath).path
            guard let text = try? String(contentsOfFile: full, encoding: .utf8) else {
                throw FileError(file: full, location: SourceLocation(line: 1, column: 1), path: "$", message: "missing")
            }
            return (text, full)
        }
    }

    /// A stepped sky track played three hours after its planned start points at the star
    /// where it is when each frame is shot, and the shot log says that pose, not the plan's.
    @Test(.blocking) func aLateTrackFollowsTheSkyAndLogsWhereItPointed() throws {
        let start = Date().timeIntervalSince1970 - 3 * 3600
        // A star circling the pole 15° from it, at 60° N: always up, never far from north.
        let text = #"""
            {"rig": {"axes": [{"name": "pan", "channel": 0}, {"name": "tilt", "channel": 1}], "camera": {"type": "sim", "focusMs": 0, "afterShotMs": 0}},
             "kind": "track", "trigger": "interval:2", "settleSeconds": 0.2, "site": {"latitude": 60, "longitude": 10},
             "shoot": {"exposureSeconds": 0.1},
             "track": {"target": {"ra": 100, "dec": 75}, "start": "\#(UTCTime.iso(start))", "frames": 3, "mount": {"northDeg": 0}}}
            """#
        let path = try RigProcess.temporaryFile("late-track.json", contents: text)
        let log = path + ".jsonl"
        let result = try RigProcess.run(["play", path, "--log", log, "--no-realtime"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("each frame points where"), "\(result.stderr)")
        let program = try ProgramParser.parse(text: text, file: path) { _, at throws(FileError) in throw at.error("no rig file") }
        let track = try #require(program.track)
        let shots = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }.filter { $0["event"] as? String == "shot" }
        #expect(shots.count == 3)
        for shot in shots {
            let pose = try #require(shot["pose"] as? [String: Double])
            let at = try #require((shot["at"] as? String).flatMap(UTCTime.parse))
            let sky = track.samples(at: [at - track.startUnix])[0]
            let step = try #require(shot["step"] as? Int)
            // Where the star was when the shutter opened (the wall clock's second, the loop's lag).
            #expect(abs((pose["pan"] ?? .nan) - sky.pan) < 0.1 && abs((pose["tilt"] ?? .nan) - sky.tilt) < 0.1, "\(shot) vs \(sky)")
            // Three hours from where the plan had it.
            let planned = program.steps[step - 1].pose
            #expect(abs((pose["pan"] ?? .nan) - planned[0]) + abs((pose["tilt"] ?? .nan) - planned[1]) > 2, "\(shot)")
        }
    }

    /// A sun track played on the simulated rig after its sun has set holds the pose it set
    /// at: planned from 16:00 local solar time on the equator, played at 19:00 (the sun set
    /// about 18:00), every frame is shot at the change-over's pose, not where the sun is.
    @Test(.blocking) func aSunTrackPlayedAfterItsSunsetHoldsWhereItSet() throws {
        let now = Date().timeIntervalSince1970
        // The longitude where it is 19:00 local mean solar time now.
        let utcHours = now.truncatingRemainder(dividingBy: 86_400) / 3600
        var longitude = (19 - utcHours) * 15
        longitude -= 360 * (longitude / 360).rounded()
        let start = now - 3 * 3600
        let text = #"""
            {"rig": {"axes": [{"name": "pan", "channel": 0, "softLimits": [-90, 90]}, {"name": "tilt", "channel": 1, "softLimits": [-30, 90]}],
                     "camera": {"type": "sim", "focusMs": 0, "afterShotMs": 0}},
             "kind": "track", "trigger": "interval:2", "settleSeconds": 0.2, "site": {"latitude": 0, "longitude": \#(longitude)},
             "shoot": {"exposureSeconds": 0.1},
             "track": {"target": "sun", "start": "\#(UTCTime.iso(start))", "frames": 3, "until": "set", "mount": {"northDeg": 270}}}
            """#
        let path = try RigProcess.temporaryFile("held-track.json", contents: text)
        let program = try ProgramParser.parse(text: text, file: path) { _, at throws(FileError) in throw at.error("no rig file") }
        let track = try #require(program.track)
        let change = try #require(track.changeOver)
        // It set between 1 and 3 hours ago (the equation of time moves it by minutes).
        #expect(change.seconds > 3600 && change.seconds < 3 * 3600 - 600, "\(change)")
        let log = path + ".jsonl"
        let result = try RigProcess.run(["play", path, "--log", log, "--no-realtime"])
        #expect(result.status == 0, "\(result.stderr)")
        let shots = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }.filter { $0["event"] as? String == "shot" }
        #expect(shots.count == 3)
        for shot in shots {
            let pose = try #require(shot["pose"] as? [String: Double])
            #expect(abs((pose["pan"] ?? .nan) - change.pan) < 0.01 && abs((pose["tilt"] ?? .nan) - change.tilt) < 0.01, "\(shot) vs \(change)")
            // The sun is well under the horizon by now.
            let at = try #require((shot["at"] as? String).flatMap(UTCTime.parse))
            #expect(Sky.position(of: .sun, at: at, site: track.site).altitude < change.tilt - 5)
        }
    }

    /// "Follow the sun until it sets, then hold": check and plan say when it changes over
    /// (the ephemeris's sunset, as plan's sun line gives it) and plan marks the held frames.
    @Test(.blocking) func aSunTrackUntilItSetsSaysWhenItChangesOver() throws {
        let check = try RigProcess.run(["check", "rigs/sunset-track.json"])
        #expect(check.status == 0, "\(check.stdout)\(check.stderr)")
        #expect(
            check.stdout.contains(
                "rigs/sunset-track.json: track: follows the sun until it sets at 2026-07-15 20:11:29 UTC (frames 43–120 after it), then holds pan 25.12°, tilt -0.35°"
            ), "\(check.stdout)")
        let plan = try RigProcess.run(["plan", "rigs/sunset-track.json"])
        #expect(plan.status == 0, "\(plan.stderr)")
        #expect(plan.stdout.contains("sunset 2026-07-15 20:11:29 UTC"), "\(plan.stdout)")
        let rows = plan.stdout.split(separator: "\n")
        #expect(rows.first { $0.hasPrefix("  42  20:11:00 UTC") }?.hasSuffix("(held)") == false)
        #expect(rows.first { $0.hasPrefix("  43  20:12:00 UTC") }?.hasSuffix("pan 25.12°  tilt -0.35°  (held)") == true, "\(plan.stdout)")
        #expect(rows.filter { $0.hasSuffix("(held)") }.count == 78)
    }

    /// `rig check` and `rig plan` time a shoot with its last run's frames when they held the
    /// rig longer than the rig file says (a camera's card write until it confirmed the file):
    /// a program that moves on as each frame ends takes that much longer; one paced by an
    /// interval its frames outlast is warned about.
    @Test(.blocking) func theLastRunsMeasuredFramesTimeTheShoot() throws {
        let state = try TestTools.temporaryDirectory()
        let runs = state.appendingPathComponent("rig/runs")
        try FileManager.default.createDirectory(at: runs, withIntermediateDirectories: true)
        let rig = #"{"axes": [{"name": "pan", "channel": 0}], "camera": {"type": "sim", "focusMs": 0, "shutterMs": 100, "afterShotMs": 0}}"#
        let auto = try RigProcess.temporaryFile(
            "slow.json",
            contents:
                #"{"rig": \#(rig), "kind": "steps", "trigger": "auto", "settleSeconds": 0.2, "steps": [{"pose": {"pan": 5}}, {"pose": {"pan": 10}}, {"pose": {"pan": 15}}]}"#
        )
        let paced = (auto as NSString).deletingLastPathComponent + "/paced.json"
        try #"{"rig": \#(rig), "kind": "steps", "trigger": "interval:1.5", "steps": [{"pose": {"pan": 5}}, {"pose": {"pan": 10}}, {"pose": {"pan": 15}}]}"#
            .write(toFile: paced, atomically: true, encoding: .utf8)
        // The last runs of these files (their real paths): four frames each held 2 s (0.1 s
        // planned), one cut short (not counted). And a newer run of another "slow.json"
        // elsewhere, its frames slower still: never taken for this one.
        let elsewhere = "/srv/other/slow.json"
        for (name, path, held, stamp) in [
            ("slow", auto, [2.0, 1.9, 2.1, 2.0], "20261127T010000Z"), ("paced", paced, [2.0, 1.9, 2.1, 2.0], "20261127T010000Z"),
            ("slow", elsewhere, [9.0, 9.0, 9.0], "20261127T020000Z"),
        ] {
            let real =
                realpath(path, nil).map { pointer in
                    defer { free(pointer) }
                    return String(cString: pointer)
                } ?? path
            let start = ShotLogStart(program: "\(name).json", programPath: real, programSha256: String(repeating: "0", count: 64), steps: 3)
            var lines = [ShotLogEvent.start(start).jsonLine()]
            for (i, seconds) in held.enumerated() {
                let shot = ShotLogShot(
                    step: i % 3 + 1, label: "step", axisNames: ["pan"], pose: [5], startSeconds: Double(i) * 5, endSeconds: Double(i) * 5 + seconds,
                    file: "/store_00010001/DCIM/100D750/DSC_000\(i).JPG")
                lines.append(ShotLogEvent.shot(shot).jsonLine())
            }
            let cut = ShotLogShot(step: 1, label: "step", axisNames: ["pan"], pose: [5], startSeconds: 30, endSeconds: 60, interrupted: true, file: "x")
            lines.append(ShotLogEvent.shot(cut).jsonLine())
            try (lines.joined(separator: "\n") + "\n").write(
                to: runs.appendingPathComponent("\(name)-\(stamp).jsonl"), atomically: true, encoding: .utf8)
        }
        let empty = try TestTools.temporaryDirectory()
        func takes(_ stdout: String) -> Double? {
            guard let line = stdout.split(separator: "\n").first(where: { $0.contains(": shoot: 3 frames") }),
                let range = line.range(of: "takes about ")
            else { return nil }
            let words = line[range.upperBound...].prefix { $0 != ";" }.split(separator: " ")
            var seconds = 0.0
            for (value, unit) in zip(words, words.dropFirst()) {
                guard let v = Double(value) else { continue }
                seconds += unit == "h" ? v * 3600 : unit == "min" ? v * 60 : unit == "s" ? v : 0
            }
            return seconds
        }
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_STATE_HOME"] = empty.path
        let before = try RigProcess.run(["check", auto], environment: environment)
        environment["XDG_STATE_HOME"] = state.path
        let after = try RigProcess.run(["check", auto], environment: environment)
        #expect(before.status == 0 && after.status == 0, "\(before.stderr)\(after.stderr)")
        #expect(!before.stdout.contains("last run"), "\(before.stdout)")
        #expect(
            after.stdout.contains(
                "its last run's frames held the rig 2.00 s each (median of 4, slow-20261127T010000Z.jsonl), not the 0.10 s the rig file gives: timed with it"),
            "\(after.stdout)")
        // Three frames, each 1.9 s longer than planned.
        let plain = try #require(takes(before.stdout), "\(before.stdout)")
        let measured = try #require(takes(after.stdout), "\(after.stdout)")
        #expect(abs(measured - plain - 5.7) <= 1, "\(plain) s, then \(measured) s")
        let plan = try RigProcess.run(["plan", auto], environment: environment)
        #expect(plan.stdout.contains("timed with it"), "\(plan.stdout)")
        // An interval its frames outlast: said, and the time stays the interval's.
        let warned = try RigProcess.run(["check", paced], environment: environment)
        #expect(warned.stdout.contains("longer than the 1.5 s interval, so frames would be missed"), "\(warned.stdout)")
    }

    /// The most common timelapse there is, a still head shooting every 5 s, passes check
    /// and plays every frame 5 s apart; check and plan say how long it takes and when it
    /// ends, frames counted with their brackets.
    @Test(.blocking) func aStillTimelapseIsFeasibleAndSaysHowLongItTakes() throws {
        let text = #"""
            {"rig": {"axes": [{"name": "pan", "channel": 0}, {"name": "tilt", "channel": 1}],
                     "camera": {"type": "sim", "focusMs": 0, "shutterMs": 100, "afterShotMs": 200}},
             "kind": "timelapse", "trigger": "interval:5", "settleSeconds": 0.3,
             "shoot": {"exposureSeconds": 1, "shotsPerStep": 2},
             "timelapse": {"frames": 6, "keyframes": {"pan": [{"frame": 0, "value": 10}], "tilt": [{"frame": 0, "value": 0}]}}}
            """#
        let path = try RigProcess.temporaryFile("still.json", contents: text)
        let check = try RigProcess.run(["check", path])
        #expect(check.status == 0, "\(check.stdout)\(check.stderr)")
        #expect(check.stdout.contains("\(path): feasible: 6 steps"), "\(check.stdout)")
        // Five 5 s intervals, the move to the first frame and the last step's two frames.
        #expect(check.stdout.contains("shoot: 12 frames (6 steps × 2), takes about "), "\(check.stdout)")
        #expect(check.stdout.contains("started now, it ends about "), "\(check.stdout)")
        let plan = try RigProcess.run(["plan", path])
        #expect(plan.status == 0, "\(plan.stderr)")
        #expect(plan.stdout.contains("shoot: 12 frames (6 steps × 2)"), "\(plan.stdout)")
        let log = path + ".jsonl"
        let play = try RigProcess.run(["play", path, "--speed", "10", "--no-realtime", "--log", log])
        #expect(play.status == 0, "\(play.stderr)")
        let starts = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").compactMap { line -> Double? in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], object["event"] as? String == "shot",
                (object["bracket"] as? Int ?? 1) == 1
            else { return nil }
            return object["startSeconds"] as? Double
        }
        #expect(starts.count == 6, "\(starts)")
        for (a, b) in zip(starts, starts.dropFirst()) { #expect(abs(b - a - 5) < 0.011, "\(starts)") }
    }

    @Test(.blocking) func panoramaTraceFollowsThePlanAndStaysWithinLimits() throws {
        let trace = try RigProcess.temporaryFile("pano.csv")
        let result = try RigProcess.run(["play", "rigs/pano.json", "--trigger", "auto", "--speed", "200", "--trace", trace, "--no-realtime"])
        #expect(result.status == 0, "\(result.stderr)")

        let program = try loadProgram("rigs/pano.json")
        let rig = program.rig
        let parsed = try Trace(path: trace)
        #expect(parsed.header == "time_s,axis,channel,pulse_us,position_deg,wall_s,camera_deg")
        let frames = parsed.frames(axes: rig.axes.map(\.name))

        // The same frames as the step function computes, to the trace's precision.
        var player = Player(rig: rig, motion: program.motion, startPose: rig.homePose)
        var expected: [[Double]] = []
        var frame = rig.homePose
        while !player.isFinished {
            if case .ready = player.tick(into: &frame) { player.advance() }
            expected.append(frame)
        }
        #expect(frames.count == expected.count)
        for (k, pose) in zip(frames, expected).enumerated() {
            for i in rig.axes.indices where abs(pose.0[i] - pose.1[i]) > 1e-3 {
                Issue.record("tick \(k) axis \(rig.axes[i].name): trace \(pose.0[i]) vs program \(pose.1[i])")
            }
        }

        // Every planned shot is a pose the rig stood still at (for its settle time).
        for step in program.steps {
            let still = frames.indices.dropFirst().contains { k in
                rig.axes.indices.allSatisfy { abs(frames[k][$0] - step.pose[$0]) < 1e-3 && abs(frames[k - 1][$0] - step.pose[$0]) < 1e-3 }
            }
            #expect(still, "never stood at \(step.label)")
        }

        // Independently of the core's monitor: limits hold on every traced frame.
        let dt = rig.tickSeconds
        var previous = rig.homePose
        var previousVelocity = [Double](repeating: 0, count: rig.axes.count)
        for pose in frames {
            for (i, axis) in rig.axes.enumerated() {
                let v = (pose[i] - previous[i]) / dt
                let a = (v - previousVelocity[i]) / dt
                // Four decimals in the trace: allow that rounding in v and a.
                #expect(pose[i] >= axis.softMin - 1e-3 && pose[i] <= axis.softMax + 1e-3)
                #expect(abs(v) <= axis.maxVelocity + 0.02)
                #expect(abs(a) <= axis.maxAcceleration + 2)
                previousVelocity[i] = v
            }
            previous = pose
        }
    }

    @Test(.blocking) func continuousMoveEndsParkedAndStandsStillAtTheEnd() throws {
        let trace = try RigProcess.temporaryFile("move.csv")
        let result = try RigProcess.run(["play", "rigs/move.json", "--speed", "200", "--trace", trace, "--no-realtime"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("done:"))
        let program = try loadProgram("rigs/move.json")
        let frames = try Trace(path: trace).frames(axes: program.rig.axes.map(\.name))
        let last = try #require(frames.last)
        for (i, axis) in program.rig.axes.enumerated() {
            #expect(abs(last[i] - (axis.park ?? last[i])) < 1e-3)
        }
    }

    @Test(.blocking) func sigtermBrakesParksAndExitsZero() throws {
        let trace = try RigProcess.temporaryFile("stop.csv")
        let (process, out, err) = try RigProcess.start(["play", "rigs/move.json", "--trace", trace, "--no-realtime"])
        // Wait until the rig is moving: the trace file has frames.
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline, ((try? String(contentsOfFile: trace, encoding: .utf8))?.split(separator: "\n").count ?? 0) < 20 {
            Thread.sleep(forTimeInterval: 0.02)
        }
        process.terminate()
        _ = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(stderr)")
        #expect(stderr.contains("stop requested"))
        let program = try loadProgram("rigs/move.json")
        let frames = try Trace(path: trace).frames(axes: program.rig.axes.map(\.name))
        // Stopped long before the 22 s program would have ended, at the park pose.
        #expect(frames.count < 2000)
        let last = try #require(frames.last)
        #expect(abs(last[0] - 0) < 1e-3 && abs(last[1] - 0) < 1e-3)
    }

    @Test(.blocking) func infeasibleProgramIsRefusedAndNothingMoves() throws {
        let program = try RigProcess.temporaryFile(
            "fast.json",
            contents: """
                {
                  "rig": { "axes": [ { "name": "pan", "channel": 0, "maxVelocity": 30, "maxAcceleration": 60 } ] },
                  "kind": "keyframes",
                  "keyframes": { "pan": [ { "t": 0, "value": 0 }, { "t": 1, "value": 80 } ] }
                }
                """)
        let trace = try RigProcess.temporaryFile("never.csv")
        let check = try RigProcess.run(["check", program])
        #expect(check.status == 1)
        #expect(check.stdout.contains("error: axis \"pan\""))
        #expect(check.stdout.contains("exceeds maxVelocity 30°/s"))
        let play = try RigProcess.run(["play", program, "--trace", trace])
        #expect(play.status == 1)
        #expect(play.stderr.contains("refusing to play"))
        #expect(!FileManager.default.fileExists(atPath: trace))
    }

    @Test(.blocking) func malformedFileGivesTheCompilerStyleLineAndExit2() throws {
        let program = try RigProcess.temporaryFile(
            "bad.json",
            contents: """
                {
                  "rig": "pantilt.json",
                  "kind": "panorama",
                  "panorama": { "lens": { "focalLengthMm": 35 }, "overlapPercent": 95, "pan": [-80, 80], "tilt": [0, 0] }
                }
                """)
        try FileManager.default.copyItem(
            atPath: RigProcess.packageRoot.appendingPathComponent("rigs/pantilt.json").path,
            toPath: (program as NSString).deletingLastPathComponent + "/pantilt.json")
        for command in ["check", "play", "plan"] {
            let result = try RigProcess.run([command, program])
            #expect(result.status == 2)
            #expect(result.stderr == "\(program):4:68: error: $.panorama.overlapPercent: 95 % is out of range; valid: 5…90 %\n")
        }
    }

    @Test(.blocking) func missingFileIsExit2() throws {
        let result = try RigProcess.run(["check", "no/such/file.json"])
        #expect(result.status == 2)
        #expect(result.stderr == "no/such/file.json:1:1: error: $: no such file\n")
    }

    @Test(.blocking) func planListsPanoramaShotsInSerpentineOrder() throws {
        let result = try RigProcess.run(["plan", "rigs/pano.json", "--csv"])
        #expect(result.status == 0, "\(result.stderr)")
        let program = try loadProgram("rigs/pano.json")
        let rows = result.stdout.split(separator: "\n").filter { $0.first?.isNumber == true }
        #expect(rows.count == program.steps.count)
        #expect(rows.first?.hasPrefix("1,\"shot 1 (row 1, column 1)\"") == true)
    }
}
