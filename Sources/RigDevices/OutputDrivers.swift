import Logging
import RigBLEControl
import RigCore
import RigFormat
import RigPCA9685
import RigRuntime

/// The output drivers this build knows, each owning its config section: the one place a
/// new output type is added. Every loaded rig goes through `validate` (with the camera's,
/// in `Devices.check`) before anything opens.
public enum OutputDrivers {
    public static let types = [SimOutputConfig.type, PCA9685OutputConfig.type, BLEControlOutputConfig.type]

    /// A driver's typed config, read from the rig's output section.
    public enum Config: Sendable {
        case sim(SimOutputConfig)
        case pca9685(PCA9685OutputConfig)
        case blecontrol(BLEControlOutputConfig)

        /// The smallest step this output makes on `axis`: the simulator sends the axes it
        /// models in PCA9685 counts (`SimOutput.models`), any other axis continuously.
        public func quantum(for axis: Axis) -> OutputQuantum {
            switch self {
            case .pca9685(let config): config.quantum
            case .blecontrol: BLEControlOutputConfig.quantum
            case .sim(let config): SimOutput.models(axis) ? config.countQuantum : .continuous
            }
        }

        /// The output's pulses as the simulator models them, for a forecast of what the
        /// rig's head does (`rig check`'s settle): the simulator's own, or a PCA9685's at
        /// the frequency the chip really makes; nil for a BLEControl board (its servos'
        /// timing is the board's).
        public var simulatedModel: SimOutputConfig? {
            switch self {
            case .sim(let config): return config
            case .pca9685(let config):
                var model = SimOutputConfig()
                model.frequencyHz = config.actualFrequencyHz
                return model
            case .blecontrol: return nil
            }
        }
    }

    /// Reads the rig's output section with its driver (`FILE:LINE:COL` errors): its keys,
    /// and the axes' channels against the driver's count.
    public static func config(_ rig: Rig) throws(FileError) -> Config {
        let output = rig.output
        switch output.type {
        case SimOutputConfig.type: return .sim(try SimOutputConfig.parse(output, axes: rig.axes))
        case PCA9685OutputConfig.type: return .pca9685(try PCA9685OutputConfig.parse(output, axes: rig.axes))
        case BLEControlOutputConfig.type: return .blecontrol(try BLEControlOutputConfig.parse(output, axes: rig.axes))
        default:
            let at = output.section.reader.member("type") ?? output.section.reader
            throw at.error("\"\(elided(output.type))\" is not valid; valid: \(quotedList(types))")
        }
    }

    public static func validate(_ rig: Rig) throws(FileError) {
        _ = try config(rig)
    }

    /// The output a rig file asks for (validated already). Constructing it touches no
    /// hardware: `start` does.
    public static func make(for rig: Rig, logger: Logger) throws -> Output {
        switch try config(rig) {
        case .sim(let config): SimOutput(config: config, rig: rig)
        case .pca9685(let config):
            {
                let output = PCA9685Output(config: config, logger: logger)
                output.countTrim = CountTrim(rig: rig, periodMicroseconds: output.periodMicroseconds)
                return output
            }()
        case .blecontrol(let config): BLEControlOutput(config: config, logger: logger)
        }
    }
}
