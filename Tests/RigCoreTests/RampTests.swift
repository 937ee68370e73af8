import Foundation
import Testing

@testable import RigCore

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
