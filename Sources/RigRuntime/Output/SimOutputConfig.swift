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

    public init() {}

    /// Reads the rig's output section (its type is `sim`) and checks the axes' channels.
    public static func parse(_ output: OutputConfig, axes: [Axis]) throws(FileError) -> SimOutputConfig {
        let object = try output.object()
        var config = SimOutputConfig()
        if let speed = object.optional("servoSpeedDegPerS") {
            config.servoSpeedDegreesPerSecond = try speed.number(in: Bounds.velocity, unit: "°/s")
        }
        try object.finish()
        try output.checkChannels(of: axes, count: channelCount)
        return config
    }
}
