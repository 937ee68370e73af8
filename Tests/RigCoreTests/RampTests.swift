import Foundation
import Testing

@testable import RigCore
@testable import RigFormat
@testable import RigSky

/// Exposure ramps against the simulated sunset: EV 14 to EV −4 in 90 minutes, a frame
/// every 5 s (1,080 frames).
@Suite struct RampTests {
    static let frames = 1080
    static let interval = 5.0
    /// Three frames lit by passing headlights, 3 EV over the scene.
    static let scene = SimScene(keys: SimScene.sunset.keys, outliers: [200: 3, 520: 3, 521: 2.5, 900: 3])

    @Test func theClosedLoopRampHoldsTheSunsetWithoutFlicker() {
        let ramp = ExposureRamp(source: .auto(targetEV: 0, startEV: 14))
        let figures = RampSimulation.figures(RampSimulation.run(ramp, scene: Self.scene, frames: Self.frames, interval: Self.interval))
        #expect(figures.fractionSmooth >= 0.99, "\(figures)")
        #expect(figures.maxStepEV <= 0.35, "\(figures)")
        #expect(figures.maxErrorEV <= 0.5, "\(figures)")
    }

    @Test func theNaiveRampFlickersAndDrifts() {
        let naive = RampSimulation.figures(
            RampSimulation.runNaive(scene: Self.scene, frames: Self.frames, interval: Self.interval, limits: ExposureLimits(), startEV: 14))
        // A whole stop at every change, up to a stop off between them, and headlights mistaken for dawn.
        #expect(naive.maxStepEV >= 0.99)
        #expect(naive.maxErrorEV >= 0.9)
    }

    @Test func plannedRampsFollowTheirPlan() {
        // Keys that match the scene: open loop, no measuring needed.
        let keys = ExposureRamp(source: .keys(frames: (0...108).map { Double($0 * 10) }, evs: (0...108).map { SimScene.sunset.ev(at: Double($0 * 10) * 5) }))
        let figures = RampSimulation.figures(RampSimulation.run(keys, scene: Self.scene, frames: Self.frames, interval: Self.interval))
        #expect(figures.maxErrorEV <= 0.05, "\(figures)")
        #expect(figures.fractionSmooth == 1, "\(figures)")
    }

    @Test func thirdStopsChangeByAThirdAtMostAndNotTooOften() {
        let limits = ExposureLimits(bulb: false)
        let ramp = ExposureRamp(source: .keys(frames: [0, 1079], evs: [14, -4]), limits: limits, maxStepEV: 1.0 / 3, minFramesBetweenChanges: 5)
        var runner = ExposureRampRunner(ramp)
        var evs: [Double] = []
        for i in 0..<1080 { evs.append(runner.settings(frame: i, seconds: Double(i) * 5).ev100) }
        var lastChange = -100
        for i in 1..<evs.count where abs(evs[i] - evs[i - 1]) > 1e-9 {
            #expect(abs(evs[i] - evs[i - 1]) <= 1.0 / 3 + 0.02, "frame \(i): \(evs[i - 1]) → \(evs[i])")
            #expect(i - lastChange >= 5, "frame \(i) changed \(i - lastChange) frames after the last change")
            lastChange = i
        }
        #expect(abs((evs.last ?? 0) - -4) < 0.4)
    }

    @Test func higherISOsOnlyOnceTheLongestShutterIsNotEnough() {
        let limits = ExposureLimits(isos: [100, 200, 400, 800, 1600, 3200, 6400], aperture: 2.8, maxShutterSeconds: 20)
        let day = limits.settings(forEV: 14)
        #expect(day.iso == 100 && abs(day.ev100 - 14) < 1e-9)
        let night = limits.settings(forEV: -4)
        #expect(night.shutterSeconds <= 20 && abs(night.ev100 - -4) < 1e-9)
        #expect(night.iso == 800)  // 7.84 × 16 × 100/800 = 15.7 s ≤ 20 s; ISO 400 would need 31 s
    }
}

@Suite struct SunRampTests {
    @Test func theSunRampGoesFromTheDayExposureToTheNightsAsTheSunSets() throws {
        let program = try ProgramParser.parse(
            text: #"""
                {"rig": {"axes": [{"name": "pan", "channel": 0}], "site": {"latitude": 51.48, "longitude": 0}}, "kind": "timelapse", "trigger": "interval:10",
                 "shoot": {"bulb": true, "ramp": {"mode": "sun", "start": "2026-06-21T19:00:00Z",
                           "day": {"shutter": "1/500", "aperture": "f/4", "iso": 100}, "night": {"shutter": "15", "aperture": "f/4", "iso": 1600}}},
                 "timelapse": {"frames": 10, "keyframes": {"pan": [{"frame": 0, "value": 0}]}}}
                """#, file: "p.json"
        ) { _, at throws(FileError) in throw at.error("no rig files here") }
        let ramp = try #require(program.shoot.ramp)
        let dayEV = ExposureSettings(shutterSeconds: 1.0 / 500, iso: 100, aperture: 4).ev100
        let nightEV = ExposureSettings(shutterSeconds: 15, iso: 1600, aperture: 4).ev100
        // 19:00 UTC at Greenwich on midsummer: the sun 9.7° up, day; at midnight about 15° down, night.
        #expect(abs((ramp.plannedEV(frame: 0, seconds: 0) ?? 0) - dayEV) < 1e-9)
        #expect(abs((ramp.plannedEV(frame: 0, seconds: 5 * 3600) ?? 0) - nightEV) < 1e-9)
        // In between it only ever falls.
        var last = dayEV
        for minute in stride(from: 0.0, through: 300, by: 5) {
            let ev = ramp.plannedEV(frame: 0, seconds: minute * 60) ?? .nan
            #expect(ev <= last + 1e-9)
            last = ev
        }
        // The rig holds still for the night's exposure: check paces the interval with it.
        #expect(abs(program.shoot.exposureSeconds - ramp.longestShutterSeconds) < 1e-9)
        // Every frame is shot at the aperture the exposures name (f/4, not the default
        // f/2.8), and with the ISOs between the day's and the night's.
        #expect(ramp.limits.aperture == 4)
        #expect(ramp.limits.isos == [100, 200, 400, 800, 1600])
        for minute in stride(from: 0.0, through: 300, by: 15) {
            let settings = ramp.limits.settings(forEV: ramp.plannedEV(frame: 0, seconds: minute * 60) ?? 0)
            #expect(settings.aperture == 4 && (100...1600).contains(settings.iso), "\(settings)")
        }
    }

    /// The plan follows the sun's geometric altitude: no step where refraction stops at −2°
    /// (the refracted altitude dropped 0.7° there, and the plan 0.6 EV in a frame).
    @Test func theSunPlanHasNoJumpAsTheSunSets() throws {
        let site = Site(latitude: 51.48, longitude: 0)
        let ramp = ExposureRamp(
            source: .sun(dayEV: 13, nightEV: -3, startUnix: 1_782_068_400, site: site), limits: ExposureLimits())
        var previous: Double?
        var worst = 0.0
        for t in stride(from: 0.0, through: 5 * 3600, by: 10) {
            let ev = try #require(ramp.plannedEV(frame: 0, seconds: t))
            if let previous { worst = max(worst, abs(ev - previous)) }
            previous = ev
        }
        // 16 EV over 20° of altitude at ≤ 0.05°/10 s: a smooth plan steps ≤ 0.04 EV.
        #expect(worst <= 0.05, "worst step \(worst) EV in 10 s")
    }

    @Test func aSunRampWithTwoAperturesIsRefusedNamingBoth() throws {
        do {
            _ = try ProgramParser.parse(
                text:
                    #"{"rig": {"axes": [{"name": "pan", "channel": 0}], "site": {"latitude": 51.48, "longitude": 0}}, "kind": "timelapse", "trigger": "interval:10", "shoot": {"bulb": true, "ramp": {"mode": "sun", "start": "2026-06-21T19:00:00Z", "day": {"shutter": "1/500", "aperture": "f/8"}, "night": {"shutter": "15", "aperture": "f/2.8"}}}, "timelapse": {"frames": 10, "keyframes": {"pan": [{"frame": 0, "value": 0}]}}}"#,
                file: "p.json"
            ) { _, at throws(FileError) in throw at.error("no rig files here") }
            Issue.record("two apertures were accepted")
        } catch {
            #expect(error.description.contains("$.shoot.ramp.night.aperture"), "\(error)")
            #expect(error.description.contains("the day's is f/8, the night's f/2.8"), "\(error)")
        }
    }
}

extension SunRampTests {
    /// The day and night exposures' ISO is arithmetic: a text that is not a finite number
    /// in range is refused where it stands, not turned into NaN or infinite frames.
    @Test(arguments: ["\"nan\"", "\"0\"", "\"1e400\"", "\"Auto\"", "\"-100\""])
    func aSunRampISOThatIsNoNumberIsRefused(iso: String) throws {
        do {
            _ = try ProgramParser.parse(
                text:
                    #"{"rig": {"axes": [{"name": "pan", "channel": 0}], "site": {"latitude": 51.48, "longitude": 0}}, "kind": "timelapse", "trigger": "interval:10", "shoot": {"bulb": true, "ramp": {"mode": "sun", "start": "2026-06-21T19:00:00Z", "day": {"shutter": "1/500", "iso": \#(iso)}, "night": {"shutter": "15", "iso": 1600}}}, "timelapse": {"frames": 10, "keyframes": {"pan": [{"frame": 0, "value": 0}]}}}"#,
                file: "p.json"
            ) { _, at throws(FileError) in throw at.error("no rig files here") }
            Issue.record("ISO \(iso) was accepted")
        } catch {
            #expect(error.description.contains("$.shoot.ramp.day.iso"), "\(error)")
            #expect(error.description.contains("valid: a number 25…409600"), "\(error)")
        }
    }
}

@Suite struct RampKeyTests {
    func ramp(_ keys: String) throws(FileError) -> ExposureRamp? {
        try ProgramParser.parse(
            text:
                #"{"rig": {"axes": [{"name": "pan", "channel": 0}]}, "kind": "timelapse", "trigger": "interval:10", "shoot": {"bulb": true, "ramp": {"mode": "keys", "aperture": 2.8, "keys": \#(keys)}}, "timelapse": {"frames": 100, "keyframes": {"pan": [{"frame": 0, "value": 0}]}}}"#,
            file: "p.json"
        ) { _, at throws(FileError) in throw at.error("no rig files here") }.shoot.ramp
    }

    @Test func keysMayGiveTheSettingsInsteadOfAnEV() throws {
        // 1/250 s at f/8, ISO 100 is EV100 13.97; 20 s at f/2.8, ISO 1600 (the ramp's aperture) is −4.35.
        let r = try #require(try ramp(#"[{"frame": 0, "shutter": "1/250", "aperture": "f/8"}, {"frame": 99, "shutter": 20, "iso": 1600}]"#))
        let day = ExposureSettings(shutterSeconds: 1.0 / 250, iso: 100, aperture: 8).ev100
        let night = ExposureSettings(shutterSeconds: 20, iso: 1600, aperture: 2.8).ev100
        #expect(abs((r.plannedEV(frame: 0, seconds: 0) ?? 0) - day) < 1e-9)
        #expect(abs((r.plannedEV(frame: 99, seconds: 990) ?? 0) - night) < 1e-9)
        // Interpolated in EV: halfway in frames is halfway in stops.
        #expect(abs((r.plannedEV(frame: 49, seconds: 490) ?? 0) - (day + (night - day) * 49 / 99)) < 1e-9)
    }

    @Test func aKeyGivesAnEVOrSettingsNotBoth() {
        do {
            _ = try ramp(#"[{"frame": 0, "ev": 12, "shutter": "1/250"}]"#)
            Issue.record("no error")
        } catch {
            #expect(error.description.contains(#"give "ev" or the settings ("shutter", "iso", "aperture"), not both"#), "\(error)")
        }
    }
}
