import Logging
import RigCore
import RigRuntime

/// The output a rig file asks for.
func makeOutput(for rig: Rig, logger: Logger) throws -> Output {
    switch rig.output {
    case .sim(let config):
        return SimOutput(config: config, rig: rig)
    case .pca9685:
        throw OutputFault("the pca9685 output is not built yet")
    case .blecontrol:
        throw OutputFault("the blecontrol output is not built yet")
    }
}
