import Foundation
import RigCore
import Testing
@testable import RigBLEControl

/// The coalescing scheduler against a model of the stock library, on the simulated link.
@Suite struct ComparisonTests {
    static func rig(hz: Double) -> Rig {
        let calibration = try! Calibration.make(points: [(-90, 1000), (90, 2000)], inverted: false).get()
        return Rig(name: "ble", axes: [
            Axis(name: "pan", kind: .servo, channel: 0, calibration: calibration, home: 0, park: nil,
                 softMin: -85, softMax: 85, maxVelocity: 90, maxAcceleration: 180, idle: .release),
            Axis(name: "tilt", kind: .servo, channel: 1, calibration: calibration, home: 0, park: nil,
                 softMin: -45, softMax: 60, maxVelocity: 60, maxAcceleration: 120, idle: .hold),
        ], output: .blecontrol(BLEControlOutputConfig()), loopRateHz: hz)
    }

    /// rigs/move.json's 20 s reveal: pan −45° → 45°, tilt 0 → 15° → 0.
    static let reveal: Motion = .continuous(tracks: [
        AxisTrack(keys: [Keyframe(time: 0, value: -45), Keyframe(time: 8, value: 0), Keyframe(time: 16, value: 45), Keyframe(time: 20, value: 45)]),
        AxisTrack(keys: [Keyframe(time: 0, value: 0), Keyframe(time: 10, value: 15), Keyframe(time: 20, value: 0)]),
    ], durationSeconds: 20)

    @Test func coalescingBeatsTheStockStrategy() {
        for hz in [50.0, 100.0] {
            let rig = Self.rig(hz: hz)
            let report = BLEControlComparison.run(rig: rig, motion: Self.reveal, startPose: [-45, 0])
            print("BLEControlComparison reveal 20 s, 2 axes:\n" + report.summary)
            #expect(report.coalesced.maxBytesInOneSecond <= 960 + 20)
            // Fewer bytes for the same program (the stock queue also lags seconds behind).
            #expect(report.byteRatio > 1)
            if hz == 50 { #expect(report.coalesced.maxTrackingErrorMicroseconds <= 1) }
            #expect(report.coalesced.maxLatencySeconds < report.stock.maxLatencySeconds)
        }
    }
}
