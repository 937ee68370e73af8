import RigCore
import RigFormat

/// Why an oscillator calibration was refused.
public enum PCA9685CalibrationError: Error, Sendable, Equatable, CustomStringConvertible {
    case invalidMeasurement(Double)
    case implausible(oscillatorHz: Double, measuredHz: Double, expectedHz: Double)

    public var description: String {
        switch self {
        case .invalidMeasurement(let hz):
            "measured frequency \(hz) Hz is not a positive number"
        case .implausible(let osc, let measured, let expected):
            "a measured \(format(measured)) Hz (expected about \(format(expected)) Hz) means an oscillator of "
                + "\(format(osc / 1_000_000)) MHz, outside 20–30 MHz; measure the PWM frequency of one "
                + "channel (not a pulse width) with the rig running at its configured frequencyHz"
        }
    }
}
