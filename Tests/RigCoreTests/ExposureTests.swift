import Foundation
import Testing

@testable import RigCore
@testable import RigFormat
@testable import RigSky

/// A program's exposure and brackets, and their matching to a camera's own choices.
@Suite struct ExposureTests {
    @Test(arguments: [
        ("1/250", 0.004), ("0.0040s", 0.004), ("2", 2.0), ("2s", 2.0), ("30\"", 30.0), ("1.3\"", 1.3), ("1/3.2", 1 / 3.2),
    ])
    func shutterSpeedsAsCamerasWriteThem(_ text: String, _ seconds: Double) {
        let parsed = ShutterSpeed.seconds(text)
        #expect(parsed != nil && abs(parsed! - seconds) < 1e-9)
    }

    @Test func wordsAreNotShutterSpeeds() {
        for text in ["Bulb", "Auto", "", "1/0", "-2", "1/x", "1e400/1", "1e400", "nan", "nan/2", "inf"] {
            #expect(ShutterSpeed.seconds(text) == nil, "\(text)")
        }
        #expect(Aperture.number("f/5.6") == 5.6)
        #expect(Aperture.number("F8") == 8)
        #expect(Aperture.number("wide") == nil)
    }

    /// What a camera reports it made (its nearest choice) is what a ramp measures against:
    /// a camera's own names (gphoto2's, the simulated camera's), or nothing when one is missing.
    @Test func theSettingsACameraReportsAreTheExposureItMade() throws {
        let nikon = try #require(
            ExposureValue.made([CameraSetting("shutterspeed", "1/125"), CameraSetting("f-number", "f/5.6"), CameraSetting("iso", "400")]))
        #expect(abs(nikon.ev100 - (log2(5.6 * 5.6 * 125) - 2)) < 1e-9)
        let sim = try #require(ExposureValue.made([CameraSetting("exposureSeconds", "0.5"), CameraSetting("iso", "100"), CameraSetting("aperture", "f/2.8")]))
        #expect(abs(sim.ev100 - log2(2.8 * 2.8 / 0.5)) < 1e-9)
        #expect(ExposureValue.made([CameraSetting("shutterspeed", "1/125"), CameraSetting("iso", "400")]) == nil)
        #expect(ExposureValue.made([CameraSetting("shutterspeed", "Bulb"), CameraSetting("f-number", "f/8"), CameraSetting("iso", "400")]) == nil)
        #expect(ExposureValue.made([CameraSetting("shutterspeed", "1/125"), CameraSetting("f-number", "f/8"), CameraSetting("iso", "Auto")]) == nil)
    }

    @Test func bracketsGoNormalThenUnderThenOver() {
        #expect(Bracket(count: 3, stepEV: 1).offsetsEV == [0, -1, 1])
        #expect(Bracket(count: 5, stepEV: 0.7).offsetsEV.map { ($0 * 10).rounded() / 10 } == [0, -0.7, 0.7, -1.4, 1.4])
        #expect(Bracket(count: 9, stepEV: 2).offsetsEV.count == 9)
    }

    static let nikon = CameraChoices([
        .shutter: .init(
            name: "shutterspeed", current: "1/60",
            choices: ["30", "15", "8", "4", "2", "1", "1/2", "1/4", "1/8", "1/15", "1/30", "1/60", "1/125", "1/250", "1/500", "1/1000", "Bulb"]),
        .aperture: .init(name: "f-number", current: "f/4", choices: ["f/2.8", "f/4", "f/5.6", "f/8", "f/11"]),
        .iso: .init(name: "iso", current: "Auto", choices: ["Auto", "100", "200", "400", "800"]),
    ])

    @Test func settingsMatchTheCamerasOwnSpelling() throws {
        let frames = try ExposureMatch.frames(Exposure(shutter: "0.004", aperture: "8", iso: "400"), bracket: nil, camera: Self.nikon).get()
        #expect(frames == [[CameraSetting("shutterspeed", "1/250"), CameraSetting("f-number", "f/8"), CameraSetting("iso", "400")]])
        #expect(try ExposureMatch.frames(Exposure(iso: "auto"), bracket: nil, camera: Self.nikon).get() == [[CameraSetting("iso", "Auto")]])
    }

    @Test func aValueTheCameraDoesNotListIsRefusedWithItsChoices() {
        guard case .failure(let problem) = ExposureMatch.frames(Exposure(aperture: "f/22"), bracket: nil, camera: Self.nikon) else {
            Issue.record("f/22 accepted")
            return
        }
        #expect(problem.description == #"aperture "f/22" is not one of the camera's choices (f-number): "f/2.8", "f/4", "f/5.6", "f/8", "f/11""#)
        guard case .failure(let ev) = ExposureMatch.frames(Exposure(ev: 1), bracket: nil, camera: Self.nikon) else {
            Issue.record("ev accepted")
            return
        }
        #expect(ev.description == #"the camera offers no ev setting; it offers "shutter", "aperture", "iso""#)
    }

    @Test func aBracketTakesTheNearestShutterSpeedForEachFrame() throws {
        // 1/60 at ±1 EV and ±2 EV: exact choices; at ±1.3 EV (stepEV 1.3 is not a stop) the nearest.
        let frames = try ExposureMatch.frames(nil, bracket: Bracket(count: 5, stepEV: 1), camera: Self.nikon).get()
        #expect(frames.map { $0.last?.value } == ["1/60", "1/125", "1/30", "1/250", "1/15"])
        let odd = try ExposureMatch.frames(Exposure(aperture: "f/8"), bracket: Bracket(count: 3, stepEV: 1.3), camera: Self.nikon).get()
        #expect(odd.map { $0.map(\.value) } == [["f/8", "1/60"], ["f/8", "1/125"], ["f/8", "1/30"]])
        // Far past the camera's range: refused (two frames would be one exposure), naming
        // the span the camera has there, never shot as the extreme choice or "Bulb".
        guard case .failure(let far) = ExposureMatch.frames(Exposure(shutter: "1/1000"), bracket: Bracket(count: 3, stepEV: 3), camera: Self.nikon)
        else {
            Issue.record("a bracket past the camera's fastest speed was taken")
            return
        }
        #expect(
            far.description
                == #"a bracket of 3 at 3 EV around 1/1000 s needs 1/8000 s…1/125 s; the camera's shutter speeds reach 1/1000 s…30 s, so frames 1 and 2 would both be "1/1000". Around 1/1000 s it spans 14.9 EV over and 0.0 EV under: no bracket at 3 EV there; give a base shutter with room both ways, fewer frames or another stepEV"#
        )
        // 9 frames at 2 EV from 1/60 s need 1/15360 s: 5 fit (1/1000 s…1/4 s).
        guard case .failure(let wide) = ExposureMatch.frames(nil, bracket: Bracket(count: 9, stepEV: 2), camera: Self.nikon) else {
            Issue.record("a bracket past the camera's range was taken")
            return
        }
        #expect(wide.description.contains("frames 8 would be off") == false)
        #expect(wide.description.contains("at most 5 frames at 2 EV there"), "\(wide)")
        #expect(
            try ExposureMatch.frames(nil, bracket: Bracket(count: 5, stepEV: 2), camera: Self.nikon).get().map { $0.last?.value } == [
                "1/60", "1/250", "1/15", "1/1000", "1/4",
            ])
        var bulb = Self.nikon
        bulb.widgets[.shutter]?.current = "Bulb"
        guard case .failure(let problem) = ExposureMatch.frames(nil, bracket: Bracket(count: 3, stepEV: 1), camera: bulb) else {
            Issue.record("a bracket from Bulb")
            return
        }
        #expect(problem.description.hasPrefix(#"a bracket needs a base shutter speed: the camera's is "Bulb"; give "shutter" in "exposure""#))
    }

    func program(_ body: String) throws(FileError) -> Program {
        try ProgramParser.parse(
            text: #"{"rig": {"axes": [{"name": "pan", "channel": 0}], "camera": {"type": "gphoto2"}}, "kind": "steps", \#(body)}"#, file: "p.json"
        ) { _, at throws(FileError) in throw at.error("no rig files here") }
    }

    /// Bulb through libgphoto2: the shutter goes to the camera's Bulb choice (the rig times
    /// the frame), the other settings match as usual; a camera without a bulb control is
    /// refused before anything moves, naming its longest speed.
    @Test func bulbModeSetsTheCamerasBulbOrIsRefusedByACameraWithout() throws {
        let p = try program(
            #""shoot": {"bulb": true, "exposureSeconds": 90, "exposure": {"aperture": "f/8"}}, "steps": [{"pose": {"pan": 1}}, {"pose": {"pan": 2}, "exposure": {"iso": 400}}]"#
        )
        var withBulb = Self.nikon
        withBulb.bulb = CameraChoices.BulbControl(widget: "bulb", shutterChoice: "Bulb")
        let plan = try ExposurePlan.make(program: p, camera: withBulb).get()
        #expect(plan.settings(step: 0, bracket: 1) == [CameraSetting("shutterspeed", "Bulb"), CameraSetting("f-number", "f/8")])
        #expect(plan.settings(step: 1, bracket: 1) == [CameraSetting("shutterspeed", "Bulb"), CameraSetting("f-number", "f/8"), CameraSetting("iso", "400")])
        #expect(withBulb.bulb?.press == "1" && withBulb.bulb?.release == "0")
        #expect(CameraChoices.BulbControl(widget: "eosremoterelease", shutterChoice: "bulb").press == "Press Full")
        guard case .failure(let problem) = ExposurePlan.make(program: p, camera: Self.nikon) else {
            Issue.record("a camera without a bulb control took a bulb program")
            return
        }
        #expect(problem.description.contains("this camera offers none") && problem.description.contains("up to 30 s"), "\(problem)")
    }

    /// A ramp the camera cannot follow is refused when the camera is known: ISO it cannot
    /// set, an aperture it cannot set, a time past its longest speed without bulb.
    @Test func aRampTheCameraCannotFollowIsRefused() throws {
        func ramp(_ body: String) throws -> Program {
            try program(#""trigger": "auto", "shoot": {"ramp": {\#(body)}}, "steps": [{"pose": {"pan": 1}}, {"pose": {"pan": 2}}]"#)
        }
        var noISO = Self.nikon
        noISO.widgets[.iso] = nil
        // To EV 4 at f/2.8 the shutter alone does it (0.49 s): no ISO needed, fine.
        let light = try ramp(#""mode": "keys", "maxStepEV": 3, "keys": [{"frame": 0, "ev": 10}, {"frame": 1, "ev": 4}]"#)
        #expect((try? ExposurePlan.make(program: light, camera: noISO).get()) != nil)
        // To EV −4 it needs ISO past 100 (the shutter stops at maxShutterSeconds).
        let dark = try ramp(#""mode": "keys", "maxStepEV": 3, "maxShutterSeconds": 20, "keys": [{"frame": 0, "ev": 10}, {"frame": 1, "ev": -4}]"#)
        guard case .failure(let iso) = ExposurePlan.make(program: dark, camera: noISO) else {
            Issue.record("a ramp that raises ISO was taken by a camera without ISO")
            return
        }
        #expect(iso.description.contains("offers no ISO setting"), "\(iso)")
        #expect((try? ExposurePlan.make(program: dark, camera: Self.nikon).get()) != nil)
        // Past the camera's longest speed (30 s) without bulb.
        let long = try ramp(#""mode": "auto", "startEV": 10, "isos": [100], "maxShutterSeconds": 60"#)
        guard case .failure(let time) = ExposurePlan.make(program: long, camera: Self.nikon) else {
            Issue.record("a 60-s ramp was taken by a camera whose longest speed is 30 s")
            return
        }
        #expect(time.description.contains("the camera's longest speed is 30 s"), "\(time)")
    }

    @Test func aStepsExposureGoesOverTheProgramsAndTheProblemNamesTheStep() throws {
        let p = try program(
            #""shoot": {"exposure": {"shutter": "1/60", "aperture": "f/4"}}, "steps": [{"pose": {"pan": 1}}, {"pose": {"pan": 2}, "exposure": {"aperture": "f/11"}}]"#
        )
        let plan = try ExposurePlan.make(program: p, camera: Self.nikon).get()
        #expect(plan.settings(step: 0, bracket: 1) == [CameraSetting("shutterspeed", "1/60"), CameraSetting("f-number", "f/4")])
        #expect(plan.settings(step: 1, bracket: 1) == [CameraSetting("shutterspeed", "1/60"), CameraSetting("f-number", "f/11")])
        // The rig holds still for the exposure it set.
        #expect(p.shoot.exposureSeconds == 1.0 / 60)
        let bad = try program(#""steps": [{"pose": {"pan": 1}}, {"pose": {"pan": 2}, "exposure": {"aperture": "f/16"}}]"#)
        guard case .failure(let problem) = ExposurePlan.make(program: bad, camera: Self.nikon) else {
            Issue.record("f/16 accepted")
            return
        }
        #expect(problem.description.hasPrefix(#"step 2 (step 2): aperture "f/16" is not one of the camera's choices"#))
    }

    @Test(arguments: [
        (
            #""shoot": {"exposure": {}}, "steps": [{"pose": {"pan": 1}}]"#,
            #"$.shoot.exposure: an empty exposure; give any of "shutter", "aperture", "iso", "ev""#
        ),
        (#""shoot": {"exposure": {"shutter": "fast"}}, "steps": [{"pose": {"pan": 1}}]"#, #"$.shoot.exposure.shutter: "fast" is not a shutter speed"#),
        (#""shoot": {"bracket": {"count": 4, "stepEV": 1}}, "steps": [{"pose": {"pan": 1}}]"#, #"$.shoot.bracket.count: 4 frames; valid: 3, 5, 7 or 9"#),
        (
            #""shoot": {"bracket": {"count": 3, "stepEV": 5}}, "steps": [{"pose": {"pan": 1}}]"#,
            #"$.shoot.bracket.stepEV: 5 EV is out of range; valid: 0.3…3 EV"#
        ),
        (
            #""shoot": {"shotsPerStep": 3, "bracket": {"count": 3, "stepEV": 1}}, "steps": [{"pose": {"pan": 1}}]"#,
            #"$.shoot.shotsPerStep: a bracket takes its own count of frames per step"#
        ),
        (#""steps": [{"pose": {"pan": 1}, "exposure": {"iso": 0}}]"#, #"$.steps[0].exposure.iso: 0 is out of range"#),
    ])
    func badExposureKeysAreLocated(_ body: String, _ expected: String) {
        do {
            _ = try program(body)
            Issue.record("no error")
        } catch {
            #expect(error.description.contains(expected), "\(error.description)")
        }
    }
}
