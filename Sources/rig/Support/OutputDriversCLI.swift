import ArgumentParser
import RigCore
import RigDevices
import RigPCA9685

extension OutputDrivers {
    /// The rig's PCA9685 (for the commands that talk to the chip alone), or exit 2
    /// naming the output it has instead.
    static func pca9685(_ rig: Rig, file: String) throws(ExitCode) -> PCA9685OutputConfig {
        guard case .pca9685(let config)? = try? config(rig) else {
            printError("\(file): error: $.output: the rig's output is \(rig.output.type), not pca9685")
            throw ExitCode(2)
        }
        return config
    }
}
