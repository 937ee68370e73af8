import RigCore
import RigRuntime
import Synchronization

/// A two-axis rig for loop tests: a servo pan and a pwm light.
func testRig(loopRateHz: Double = 100) -> Rig {
    let calibration = try! Calibration.make(points: [(-90, 500), (90, 2500)], inverted: false).get()
    return Rig(
        name: "test",
        axes: [
            Axis(
                name: "pan", kind: .servo, channel: 0, calibration: calibration, home: 0, park: 10,
                softMin: -80, softMax: 80, maxVelocity: 90, maxAcceleration: 180, idle: .hold),
            Axis(
                name: "light", kind: .pwm, channel: 3, calibration: nil, home: 0, park: nil,
                softMin: 0, softMax: 100, maxVelocity: 50, maxAcceleration: 100, idle: .release),
        ], output: .sim, loopRateHz: loopRateHz)
}

func keyframes(_ rig: Rig) -> Motion {
    .continuous(
        tracks: [
            AxisTrack(keys: [Keyframe(time: 0, value: -30), Keyframe(time: 3, value: 40), Keyframe(time: 5, value: 20)]),
            AxisTrack(keys: [Keyframe(time: 0, value: 0), Keyframe(time: 4, value: 60)]),
        ], durationSeconds: 5)
}

extension ChannelCommand {
    /// The axis position a command stands for on `axis`.
    func position(on axis: Axis) -> Double? {
        switch self {
        case .pulse(let us): axis.calibration?.angle(forPulseMicroseconds: us)
        case .duty(let p): p
        case .off: nil
        }
    }
}
