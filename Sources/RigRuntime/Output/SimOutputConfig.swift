import RigCore
import RigFormat

/// The built-in simulated rig (`"type": "sim"`, the default): each servo a slew-rate-limited
/// actuator. The rig file's `"output"` section when its type is `"sim"`.
public struct SimOutputConfig: Sendable, Equatable {
    public static let type = "sim"
    /// The simulator's channels, as many as a PCA9685's.
    public static let channelCount = 16

    /// How fast a simulated servo horn turns at most (a typical hobby servo: 60° in 0.15 s).
    public var servoSpeedDegreesPerSecond: Double = 400
    /// The PWM frequency of the simulated PCA9685 (`"frequencyHz"`, as on a `pca9685`
    /// output): a modelled servo axis is sent one pulse per period, in 4096 counts of it.
    /// 50 Hz suits every servo; digital servos take 200–333 Hz (finer counts, fresher pulses).
    public var frequencyHz: Double = 50
    /// The PCA9685's range (its PRE_SCALE 3…255 at 25 MHz).
    public static let frequencyRangeHz: ClosedRange<Double> = 24...1526

    public init() {}

    /// One PWM period, µs.
    public var periodMicroseconds: Double { 1_000_000 / frequencyHz }
    /// One count of a modelled axis (`SimOutput.models`): a PCA9685's at `frequencyHz`.
    public var countQuantum: OutputQuantum { OutputQuantum(pulseMicroseconds: periodMicroseconds / 4096, dutyPercent: nil) }

    /// Reads the rig's output section (its type is `sim`) and checks the axes' channels.
    public static func parse(_ output: OutputConfig, axes: [Axis]) throws(FileError) -> SimOutputConfig {
        let object = try output.object()
        var config = SimOutputConfig()
        if let speed = object.optional("servoSpeedDegPerS") {
            config.servoSpeedDegreesPerSecond = try speed.number(in: Bounds.velocity, unit: "°/s")
        }
        if let frequency = object.optional("frequencyHz") {
            config.frequencyHz = try frequency.number(in: frequencyRangeHz, unit: "Hz")
            // Every servo's longest pulse must fit in a period.
            let longest = axes.compactMap { $0.kind == .servo ? $0.calibration?.pulses.max() : nil }.max() ?? 0
            if longest >= config.periodMicroseconds {
                throw frequency.error(
                    "\(format(config.frequencyHz)) Hz makes a \(format(config.periodMicroseconds.rounded())) µs period, no longer than the longest pulse (\(format(longest)) µs); valid: 24…\(format((1_000_000 / longest).rounded(.down) - 1)) Hz"
                )
            }
        }
        try object.finish()
        try output.checkChannels(of: axes, count: channelCount)
        return config
    }
}
