import Foundation
import RigPCA9685
import Testing

@testable import RigCore

@Suite struct AxisResolutionTests {
    /// A PCA9685 at 50 Hz on a 25 MHz oscillator, as its driver says: PRE_SCALE 121, period
    /// 122 × 4096 / 25 MHz, one count 122 / 25 µs = 4.88 µs.
    let pca9685 = PCA9685OutputConfig().quantum

    @Test func thePCA9685DriverGivesItsCountAndAdvice() {
        #expect(abs((pca9685.pulseMicroseconds ?? 0) - 4.88) < 1e-9)
        #expect(pca9685.dutyPercent == 100.0 / 4096)
        #expect(pca9685.servoAdvice?.contains("\"frequencyHz\"") == true)
        var digital = PCA9685OutputConfig()
        digital.frequencyHz = 330
        #expect(digital.quantum.servoAdvice == nil)
    }

    func rig(output: String = #"{"type": "pca9685", "frequencyHz": 50}"#) throws -> Rig {
        try RigParser.parse(text: panTiltRig(output: output), file: "rig.json")
    }

    @Test func aCountIsWorthTheCalibrationsDegreesPerMicrosecond() throws {
        let axes = AxisResolution.of(try rig(), quantum: pca9685)
        // pan: 180° over 1000 µs → 0.18°/µs → 0.8784° a count; tilt: 90° over 1000 µs → 0.4392°.
        #expect(axes.map(\.axis) == ["pan", "tilt"])
        #expect(axes.allSatisfy { abs(($0.countSize ?? 0) - 4.88) < 1e-9 })
        #expect(abs((axes[0].unitsPerCount ?? 0) - 0.8784) < 1e-9)
        #expect(abs((axes[1].unitsPerCount ?? 0) - 0.4392) < 1e-9)
        let sim = AxisResolution.of(try rig(), quantum: .continuous)
        #expect(sim.allSatisfy { $0.countSize == nil && $0.unitsPerCount == nil })
    }

    @Test func aSteeperSegmentInTheSoftRangeSetsTheResolution() throws {
        // 0…45° on 1000…1500 µs (0.09°/µs), 45…90° on 1500…1600 µs (0.45°/µs).
        let calibration = try Calibration.make(points: [(0, 1000), (45, 1500), (90, 1600)], inverted: false).get()
        let narrow = 0.0...40.0
        let wide = 0.0...80.0
        #expect(abs(AxisResolution.maxDegreesPerMicrosecond(calibration, over: narrow) - 0.09) < 1e-12)
        #expect(abs(AxisResolution.maxDegreesPerMicrosecond(calibration, over: wide) - 0.45) < 1e-12)
    }

    func timelapse(frames: Int, panTo: Double, output: String) throws -> Program {
        try parseProgram(
            """
            {"rig": \(panTiltRig(output: output)), "kind": "timelapse", "timelapse": {"frames": \(frames),
              "keyframes": {"pan": [{"frame": 0, "value": 0, "interp": "linear"}, {"frame": \(frames - 1), "value": \(panTo)}]}}}
            """)
    }

    @Test func aTimelapseMovingLessThanACountPerFrameIsWarnedAbout() throws {
        let output = #"{"type": "pca9685", "frequencyHz": 50}"#
        // 0.25° a frame against 0.8784° counts: the count changes on about every 3.5th frame.
        let slow = try timelapse(frames: 41, panTo: 10, output: output)
        let warnings = TimelapseResolutionWarning.check(slow, quantum: pca9685)
        let warning = try #require(warnings.first)
        #expect(warnings.count == 1)
        #expect(warning.axis == "pan")
        #expect(warning.movingFrames == 40)
        // Counts of 1500 + 0.25k/0.18 µs over 4.88 µs change 11 or 12 times in 40 frames.
        let counts = (0...40).map { k in ((1500 + Double(k) * 0.25 / 0.18) / 4.88).rounded() }
        let changes = zip(counts, counts.dropFirst()).filter { $0 != $1 }.count
        #expect(warning.stalledFrames == 40 - changes)
        #expect(abs(warning.smallestMove - 0.25) < 1e-9)
        #expect(warning.advice.contains("frequencyHz"))
        #expect(warning.description.contains("axis pan moves less than one output count (0.88°)"))
        // 2° a frame: every frame moves the output.
        #expect(TimelapseResolutionWarning.check(try timelapse(frames: 41, panTo: 80, output: output), quantum: pca9685).isEmpty)
        // The simulated rig has no counts.
        #expect(TimelapseResolutionWarning.check(slow, quantum: .continuous).isEmpty)
    }

    /// A continuous path (a sky track for video) is judged a second at a time: 0.1° a second
    /// against 0.88° counts holds each count for about 9 s, then jumps.
    @Test func aSlowContinuousPathIsWarnedAboutASecondAtATime() throws {
        let output = #"{"type": "pca9685", "frequencyHz": 50}"#
        let program = try parseProgram(
            """
            {"rig": \(panTiltRig(output: output)), "kind": "keyframes",
             "keyframes": {"pan": [{"t": 0, "value": 0, "interp": "linear"}, {"t": 60, "value": 6}]}}
            """)
        let warning = try #require(TimelapseResolutionWarning.check(program, quantum: pca9685).first)
        #expect(warning.per == .second && warning.movingFrames == 60)
        let counts = (0...60).map { k in ((1500 + Double(k) * 0.1 / 0.18) / 4.88).rounded() }
        #expect(warning.stalledFrames == 60 - zip(counts, counts.dropFirst()).filter { $0 != $1 }.count)
        #expect(warning.description.contains("in \(warning.stalledFrames) of its 60 moving seconds (smallest move 0.1° per second; at 0–"), "\(warning)")
        #expect(warning.description.contains("so the video stutters") && warning.advice.contains("a stepped track"))
        // 10° a second moves a count every tick of a second.
        let fast = try parseProgram(
            """
            {"rig": \(panTiltRig(output: output)), "kind": "keyframes",
             "keyframes": {"pan": [{"t": 0, "value": 0, "interp": "linear"}, {"t": 6, "value": 60}]}}
            """)
        #expect(TimelapseResolutionWarning.check(fast, quantum: pca9685).isEmpty)
    }

    @Test func blecontrolAdviceHasNoFrequency() throws {
        let output = #"{"type": "blecontrol", "address": "AA:BB:CC:DD:EE:FF"}"#
        // 1 µs counts are 0.18° on pan: 0.05° a frame stalls most frames.
        let program = try timelapse(frames: 21, panTo: 1, output: output)
        let warning = try #require(TimelapseResolutionWarning.check(program, quantum: OutputQuantum(pulseMicroseconds: 1, dutyPercent: 0.1)).first)
        #expect(!warning.advice.contains("frequencyHz"))
        #expect(warning.advice.contains("wider calibration"))
    }
}
