import Logging
import RigBLEControl
import RigCore
import RigPCA9685
import RigRuntime

/// The output a rig file asks for. Constructing it touches no hardware: `start` does.
func makeOutput(for rig: Rig, logger: Logger) throws -> Output {
    switch rig.output {
    case .sim(let config):
        return SimOutput(config: config, rig: rig)
    case .pca9685(let config):
        return PCA9685Output(config: config, logger: logger)
    case .blecontrol(let config):
        return BLEControlOutput(config: config, logger: logger)
    }
}
