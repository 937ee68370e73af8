import Foundation
import RigCore
import Testing

@testable import RigBLEControl

/// The coalescing scheduler against a model of the stock library, on the simulated link.
@Suite struct ComparisonTests {
    static func rig(hz: Double) -> Rig {
        let calibration = try! Calibration.make(points: [(-90, 1000), (90, 2000)], inverted: false).get()
        return Rig(
            name: "ble",
            axes: [
                Axis(
                    name: "pan", kind: .servo, channel: 0, calibration: calibration, home: 0, park: nil,
                    softMin: -85, softMax: 85, maxVelocity: 90, maxAcceleration: 180, idle: .release),
                Axis(
                    name: "tilt", kind: .servo, channel: 1, calibration: calibration, home: 0, park: nil,
                    softMin: -45, softMax: 60, maxVelocity: 60, maxAcceleration: 120, idle: .hold),
            ], output: OutputConfig(type: BLEControlOutputConfig.type), loopRateHz: hz)
    }

    /// rigs/move.json's 20 s reveal: pan −45° → 45°, tilt 0 → 15° → 0.
    static let reveal: Motion = .continuous(
        tracks: [
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

    /// 8 servos swinging ±30° all the time, every servo changing every tick.
    private func eightSwingingServos(rateHz: Double) throws -> BLEControlComparison.Report {
        let calibration = try #require(try? Calibration.make(points: [(-90, 1000), (90, 2000)], inverted: false).get())
        let axes = (0..<8).map { i in
            Axis(
                name: "s\(i)", kind: .servo, channel: i, calibration: calibration, home: 0, park: nil,
                softMin: -60, softMax: 60, maxVelocity: 90, maxAcceleration: 180, idle: .hold)
        }
        let rig = Rig(name: "eight", axes: axes, output: OutputConfig(type: BLEControlOutputConfig.type), loopRateHz: rateHz)
        func swing(_ i: Int) -> AxisTrack {
            var keys: [Keyframe] = []
            for k in 0...10 {
                let value: Double = k == 0 || k == 10 ? 0 : ((k + i) % 2 == 1 ? 30 : -30)
                keys.append(Keyframe(time: Double(2 * k), value: value))
            }
            return AxisTrack(keys: keys)
        }
        let tracks: [AxisTrack?] = (0..<8).map { swing($0) }
        return BLEControlComparison.run(
            rig: rig, motion: .continuous(tracks: tracks, durationSeconds: 20),
            startPose: Array(repeating: 0, count: 8))
    }

    @Test func overBudgetTheBoardsValuesStayFreshAndDoNotAge() throws {
        // At 50 Hz: 8 × 5 B × 50 = 2,000 B/s for a 960 B/s link.
        let report = try eightSwingingServos(rateHz: 50)
        let tick = 1 / 50.0
        #expect(report.coalesced.maxBytesInOneSecond <= 960 + 20)
        #expect(report.coalesced.valueAgeP99Seconds <= 3 * tick + 1e-9)
        #expect(report.coalesced.valueAgeP99LastQuarterSeconds <= report.coalesced.valueAgeP99FirstQuarterSeconds + tick + 1e-9)
        // The stock queue falls further behind the longer the program runs.
        #expect(report.stock.valueAgeP99LastQuarterSeconds > 2 * report.stock.valueAgeP99FirstQuarterSeconds)
        #expect(report.stock.rmsTrackingErrorMicroseconds > 10 * report.coalesced.rmsTrackingErrorMicroseconds)
    }

    @Test func atFourTimesTheLinkTheValueAgeStaysWithinATickOfTheFullRefresh() throws {
        // At 100 Hz the servos need 4,000 B/s: one value for each of the 8 channels takes
        // 40 B, 41.7 ms of the link, so no sender keeps every channel younger than that; the
        // scheduler must not be worse by more than the tick it samples on, nor fall behind.
        let report = try eightSwingingServos(rateHz: 100)
        let tick = 1 / 100.0
        #expect(report.channels == 8)
        #expect(abs(report.fullRefreshSeconds - 40.0 / 960) < 1e-12)
        #expect(report.coalesced.valueAgeP99Seconds <= report.fullRefreshSeconds + tick + 1e-9)
        #expect(report.coalesced.valueAgeP99LastQuarterSeconds <= report.coalesced.valueAgeP99FirstQuarterSeconds + tick + 1e-9)
        #expect(report.coalesced.maxBytesInOneSecond <= 960 + 20)
    }
}
