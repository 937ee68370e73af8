/// Which output a rig drives, with that output's settings.
public enum OutputConfig: Sendable, Equatable {
    case sim(SimOutputConfig)
    case pca9685(PCA9685OutputConfig)
    case blecontrol(BLEControlOutputConfig)

    public static let typeNames = ["sim", "pca9685", "blecontrol"]

    public var typeName: String {
        switch self {
        case .sim: "sim"
        case .pca9685: "pca9685"
        case .blecontrol: "blecontrol"
        }
    }

    /// The channels this output has.
    public var channelRange: ClosedRange<Int> {
        switch self {
        case .sim: 0...15
        case .pca9685: 0...15
        case .blecontrol: 0...7
        }
    }

    static func parse(_ value: ValueReader) throws(FileError) -> OutputConfig {
        let object = try value.object()
        let type = try object.required("type", "one of \(typeNames.joined(separator: ", "))").oneOf(typeNames)
        let config: OutputConfig
        switch type {
        case "pca9685": config = .pca9685(try PCA9685OutputConfig.parse(object))
        case "blecontrol": config = .blecontrol(try BLEControlOutputConfig.parse(object))
        default: config = .sim(try SimOutputConfig.parse(object))
        }
        try object.finish()
        return config
    }
}

/// The built-in simulated rig: each servo a slew-rate-limited actuator.
public struct SimOutputConfig: Sendable, Equatable {
    /// How fast a simulated servo horn turns at most (a typical hobby servo: 60° in 0.15 s).
    public var servoSpeedDegreesPerSecond: Double = 400

    public init() {}

    static func parse(_ object: ObjectReader) throws(FileError) -> SimOutputConfig {
        var config = SimOutputConfig()
        if let speed = object.optional("servoSpeedDegPerS") {
            config.servoSpeedDegreesPerSecond = try speed.number(in: Bounds.velocity, unit: "°/s")
        }
        return config
    }
}
