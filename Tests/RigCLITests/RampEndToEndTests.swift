import Foundation
import RigCore
import RigTestSupport
import Testing

/// An exposure ramp played by `rig play` on the simulated rig, its camera measuring each
/// frame against a simulated scene.
@Suite struct RampEndToEndTests {
    static func program(frames: Int, ramp: String, scene: String) -> String {
        #"""
        {"rig": {"loopRateHz": 50, "axes": [{"name": "pan", "channel": 0, "maxVelocity": 30}],
                 "camera": {"type": "sim", "scene": \#(scene), "focusMs": 0, "afterShotMs": 50}},
         "kind": "timelapse", "trigger": "interval:5", "settleSeconds": 0.1,
         "shoot": {"bulb": true, "ramp": \#(ramp)},
         "timelapse": {"frames": \#(frames), "keyframes": {"pan": [{"frame": 0, "value": -5}, {"frame": \#(frames - 1), "value": 5}]}}}
        """#
    }

    func play(_ text: String) throws -> (RigProcess.Result, [[String: Any]]) {
        let path = try RigProcess.temporaryFile("ramp.json", contents: text)
        let log = path + ".jsonl"
        let result = try RigProcess.run(["play", path, "--speed", "100", "--log", log, "--no-realtime"])
        let events = ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        return (result, events)
    }

    @Test(.blocking) func theClosedLoopRampHoldsAFallingScene() throws {
        // 6 EV of dusk in 10 minutes: 120 frames 5 s apart.
        let (result, events) = try play(
            Self.program(frames: 120, ramp: #"{"mode": "auto", "startEV": 12, "maxShutterSeconds": 2}"#, scene: #"[{"t": 0, "ev": 12}, {"t": 600, "ev": 6}]"#))
        #expect(result.status == 0, "\(result.stderr)")
        let images = events.filter { $0["event"] as? String == "image" }.compactMap { $0["brightnessEV"] as? Double }
        #expect(images.count == 120)
        #expect(images.allSatisfy { abs($0) <= 0.5 }, "\(images)")
        let steps = zip(images.dropFirst(), images).map { abs($0 - $1) }
        #expect(steps.allSatisfy { $0 <= 0.35 }, "\(steps.max() ?? 0)")
        // The shots record what the ramp set: the exposure lengthens as the light falls.
        let times = events.filter { $0["event"] as? String == "shot" }.compactMap { ($0["settings"] as? [String: String])?["exposureSeconds"] }
            .compactMap(Double.init)
        #expect(times.count == 120)
        #expect((times.last ?? 0) > (times.first ?? 1) * 30, "6 EV is 64× the light: \(times.first ?? 0) → \(times.last ?? 0)")
    }

    /// `+` on the terminal during an interval-paced ramp (no keyboard trigger) nudges it: the
    /// frames after it come out about a stop brighter than the scene's target, by small steps.
    @Test(.blocking) func plusOnTheTerminalNudgesTheRampBrighter() throws {
        let path = try RigProcess.temporaryFile(
            "nudge.json", contents: Self.program(frames: 60, ramp: #"{"mode": "auto", "startEV": 10, "maxShutterSeconds": 2}"#, scene: #"[{"t": 0, "ev": 10}]"#)
        )
        let log = path + ".jsonl"
        let rig = try TerminalProcess(["play", path, "--speed", "20", "--log", log, "--no-realtime"])
        defer { if rig.process.isRunning { rig.process.terminate() } }
        #expect(rig.stdout.wait(for: "keys: + brighter", within: 60), "\(rig.stdout.text)\n\(rig.stderr.text)")
        rig.type("+++")
        #expect(rig.stdout.wait(for: "exposure nudge +1.00 EV", within: 60), "\(rig.stdout.text)")
        rig.process.waitUntilExit()
        #expect(rig.process.terminationStatus == 0, "\(rig.stderr.text)")
        let events = ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        let images = events.filter { $0["event"] as? String == "image" }.compactMap { $0["brightnessEV"] as? Double }
        #expect(images.count == 60)
        // The last frames sit a stop above the target; no frame-to-frame step the eye sees.
        #expect(images.suffix(5).allSatisfy { abs($0 - 1) <= 0.35 }, "\(images)")
        #expect(zip(images.dropFirst(), images).allSatisfy { abs($0 - $1) <= 0.35 }, "\(images)")
    }

    @Test(.blocking) func withoutTheRampTheSameSceneDrifts() throws {
        // The same scene at one fixed exposure (keys that never change): 6 EV under by the end.
        let (result, events) = try play(
            Self.program(frames: 120, ramp: #"{"mode": "keys", "keys": [{"frame": 0, "ev": 12}]}"#, scene: #"[{"t": 0, "ev": 12}, {"t": 600, "ev": 6}]"#))
        #expect(result.status == 0, "\(result.stderr)")
        let images = events.filter { $0["event"] as? String == "image" }.compactMap { $0["brightnessEV"] as? Double }
        #expect(images.count == 120)
        #expect((images.last ?? 0) < -5.5)
    }

    @Test(.blocking) func aGPIOCameraRampsOnlyInBulb() throws {
        let path = try RigProcess.temporaryFile(
            "gpio-ramp.json",
            contents:
                #"{"rig": {"axes": [{"name": "pan", "channel": 0}], "camera": {"type": "gpio"}}, "kind": "timelapse", "trigger": "interval:5", "shoot": {"ramp": {"mode": "auto", "startEV": 12}}, "timelapse": {"frames": 3, "keyframes": {"pan": [{"frame": 0, "value": 0}]}}}"#
        )
        let play = try RigProcess.run(["play", path, "--log", path + ".jsonl"])
        #expect(play.status == 2)
        #expect(play.stderr.contains(#"a "gpio" camera follows a ramp only in bulb mode"#), "\(play.stderr)")
        // `rig check` refuses it the same way (as `rig serve`'s library does).
        let check = try RigProcess.run(["check", path])
        #expect(check.status == 2)
        #expect(check.stderr.contains(#"error: a "gpio" camera follows a ramp only in bulb mode"#), "\(check.stderr)")
    }

    /// A closed-loop ramp on a camera that never measures a frame would hold its first
    /// exposure all night: refused by check (and play) before anything moves, saying why;
    /// so is a gphoto2 ramp past the camera's 30 s.
    @Test(
        .blocking,
        arguments: [
            (#"{"type": "sim"}"#, #""mode": "auto", "startEV": 12"#, "a \"sim\" camera measures frames only in a scene"),
            (#"{"type": "gphoto2"}"#, #""mode": "auto", "startEV": 12"#, "this gphoto2 camera downloads no frames to measure"),
            (#"{"type": "gpio"}"#, #""mode": "auto", "startEV": 12"#, "a \"gpio\" camera returns no pictures to measure"),
            (
                #"{"type": "gphoto2", "download": "/tmp"}"#, #""mode": "auto", "startEV": 12, "maxShutterSeconds": 60"#,
                "a gphoto2 camera's longest speed is 30 s"
            ),
        ])
    func aRampTheCameraCannotFollowIsRefused(camera: String, ramp: String, message: String) throws {
        let bulb = camera.contains("gpio") ? #""bulb": true, "# : ""
        let path = try RigProcess.temporaryFile(
            "unmeasured.json",
            contents:
                #"{"rig": {"axes": [{"name": "pan", "channel": 0}], "camera": \#(camera)}, "kind": "timelapse", "trigger": "interval:5", "shoot": {\#(bulb)"ramp": {\#(ramp)}}, "timelapse": {"frames": 3, "keyframes": {"pan": [{"frame": 0, "value": 0}]}}}"#
        )
        let check = try RigProcess.run(["check", path])
        #expect(check.status == 2, "\(check.stderr)")
        #expect(check.stderr.contains(message), "\(check.stderr)")
    }

    @Test(.blocking) func aRampedIntervalSlowsTheShotsDown() throws {
        // A shot every 1 s slowing to every 3 s by frame 4, then held.
        let text = #"""
            {"rig": {"loopRateHz": 50, "axes": [{"name": "pan", "channel": 0}], "camera": {"type": "sim", "focusMs": 0, "shutterMs": 20, "afterShotMs": 0}},
             "kind": "timelapse", "trigger": "interval:1", "settleSeconds": 0.05,
             "timelapse": {"frames": 7, "keyframes": {"pan": [{"frame": 0, "value": 0}, {"frame": 6, "value": 3}]},
                           "intervalKeys": [{"frame": 0, "seconds": 1}, {"frame": 4, "seconds": 3}]}}
            """#
        let (result, events) = try play(text)
        #expect(result.status == 0, "\(result.stderr)")
        let starts = events.filter { $0["event"] as? String == "shot" }.compactMap { $0["startSeconds"] as? Double }
        #expect(starts.count == 7)
        let gaps = zip(starts.dropFirst(), starts).map { (($0 - $1) * 50).rounded() / 50 }
        #expect(gaps == [1, 1.5, 2, 2.5, 3, 3], "\(gaps)")
        // An interval a frame cannot keep is refused before anything moves, naming it.
        let tight = text.replacingOccurrences(of: #"{"frame": 4, "seconds": 3}"#, with: #"{"frame": 4, "seconds": 0.02}"#)
        let path = try RigProcess.temporaryFile("tight.json", contents: tight)
        let check = try RigProcess.run(["check", path])
        #expect(check.status == 1)
        let said = check.stdout + check.stderr
        // Said once, with the worst step and where its time goes.
        #expect(said.contains("3 steps cannot keep their interval (steps 5–7); the worst: step 6 (frame 6) needs"), "\(said)")
        #expect(said.contains("the interval is 0.02 s"), "\(said)")
        #expect(said.contains("(exposure ") && said.split(separator: "\n").filter { $0.contains("error:") }.count == 1, "\(said)")
    }
}

extension RampEndToEndTests {
    /// A run cut off halfway (a power cut after frame 10: the log ends there) and resumed:
    /// the ramp goes on from the EV its last frame was shot at, not from `startEV` again.
    @Test(.blocking) func aResumedRampGoesOnWhereItWas() throws {
        let ramp = #"{"mode": "auto", "startEV": 12, "maxShutterSeconds": 2, "maxEVPerHour": 600}"#
        let text = Self.program(frames: 20, ramp: ramp, scene: #"[{"t": 0, "ev": 7}, {"t": 600, "ev": 7}]"#)
        let path = try RigProcess.temporaryFile("resume-ramp.json", contents: text)
        let log = path + ".jsonl"
        let first = try RigProcess.run(["play", path, "--speed", "100", "--log", log, "--no-realtime"])
        #expect(first.status == 0, "\(first.stderr)")
        // Keep the log up to frame 10's image, as a power cut would leave it.
        let lines = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").map(String.init)
        func json(_ line: String) -> [String: Any] { (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]) ?? [:] }
        guard let cut = lines.lastIndex(where: { json($0)["event"] as? String == "image" && json($0)["step"] as? Int == 10 }) else {
            Issue.record("no image for frame 10 in \(lines.count) lines")
            return
        }
        try (lines[...cut].joined(separator: "\n") + "\n").write(toFile: log, atomically: true, encoding: .utf8)
        let kept = lines[...cut].map(json).filter { $0["event"] as? String == "shot" }.compactMap { $0["rampEV"] as? Double }
        let lastEV = try #require(kept.last)
        #expect(lastEV < 11.5, "the ramp had moved from 12 towards the scene's 7: \(kept)")
        let resumed = try RigProcess.run(["play", path, "--speed", "100", "--log", log, "--no-realtime", "--resume"])
        #expect(resumed.status == 0, "\(resumed.stderr)")
        let after = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").map(String.init).dropFirst(cut + 1).map(json)
        let next = after.filter { $0["event"] as? String == "shot" }.compactMap { $0["rampEV"] as? Double }
        let firstResumed = try #require(next.first)
        // One frame's step at most from where it was (maxStepEV 1/3), and never back at 12.
        #expect(abs(firstResumed - lastEV) <= 1.0 / 3 + 1e-6, "resumed at \(firstResumed), the run was at \(lastEV)")
        #expect(next.count == 10)
    }

    /// A camera whose speeds are coarser than the ramp asks for (whole stops for a ramp in
    /// thirds) makes the nearest: the closed loop reads the scene from what it made, not
    /// from what the ramp asked (`ExposureValue.made`), and the log says what it read.
    @Test(.blocking) func theClosedLoopMeasuresAgainstTheExposureTheCameraMade() throws {
        let text = #"""
            {"rig": {"loopRateHz": 50, "axes": [{"name": "pan", "channel": 0, "maxVelocity": 30}],
                     "camera": {"type": "sim", "scene": [{"t": 0, "ev": 12}, {"t": 600, "ev": 6}], "shutterStepEV": 1, "focusMs": 0, "afterShotMs": 50}},
             "kind": "timelapse", "trigger": "interval:5", "settleSeconds": 0.1,
             "shoot": {"ramp": {"mode": "auto", "startEV": 12, "maxShutterSeconds": 2, "aperture": 2.8}},
             "timelapse": {"frames": 120, "keyframes": {"pan": [{"frame": 0, "value": -5}, {"frame": 119, "value": 5}]}}}
            """#
        let (result, events) = try play(text)
        #expect(result.status == 0, "\(result.stderr)")
        let shots = events.filter { $0["event"] as? String == "shot" }
        var images: [Int: [String: Any]] = [:]
        for image in events where image["event"] as? String == "image" { images[image["step"] as? Int ?? 0] = image }
        #expect(shots.count == 120 && images.count == 120)
        var differ = 0
        var read: [Double] = []
        for shot in shots {
            let settings = try #require(shot["settings"] as? [String: String])
            let seconds = try #require(settings["exposureSeconds"].flatMap(Double.init))
            let iso = try #require(settings["iso"].flatMap(Double.init))
            let aperture = try #require(settings["aperture"].flatMap { Double($0.dropFirst(2)) })
            // The camera made whole stops only.
            #expect(abs(log2(seconds) - log2(seconds).rounded()) < 0.01, "\(settings)")
            let made = log2(aperture * aperture / seconds) - log2(iso / 100)
            let asked = try #require(shot["rampEV"] as? Double)
            let image = try #require(images[shot["step"] as? Int ?? 0])
            let brightness = try #require(image["brightnessEV"] as? Double)
            let scene = try #require(image["sceneEV"] as? Double)
            // What the loop read: the exposure made plus what was measured.
            #expect(abs(scene - (made + brightness)) < 0.001, "\(shot) \(image)")
            if abs(asked - made) > 0.2 {
                differ += 1
                // Read from the exposure asked for, it would have been that far off.
                #expect(abs(scene - (asked + brightness)) > 0.2)
            }
            read.append(scene)
        }
        // Two thirds of a ramp in thirds falls between a camera's whole stops.
        #expect(differ >= 30, "\(differ) frames made other than asked")
        // The scene it read falls smoothly as the scene does (its keys' smooth curve, at
        // most 0.08 EV a frame): no ±1/3 EV wobble of the difference between asked and made.
        let steps = zip(read.dropFirst(), read).map { $0 - $1 }
        #expect(steps.allSatisfy { $0 <= 0.001 && $0 > -0.1 }, "\(steps)")
        let bends = zip(steps.dropFirst(), steps).map { abs($0 - $1) }
        #expect(bends.allSatisfy { $0 < 0.02 }, "\(bends)")
        // And it holds the scene within the camera's half stop (and the loop's lag).
        let brightness = shots.compactMap { images[$0["step"] as? Int ?? 0]?["brightnessEV"] as? Double }
        #expect(brightness.dropFirst(10).allSatisfy { abs($0) <= 0.9 }, "\(brightness)")
    }
}
