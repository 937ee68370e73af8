import ArgumentParser
import RigCore
import RigDevices
import RigPCA9685

struct ProbeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "probe",
        abstract: "Look for hardware.",
        subcommands: [ProbeI2C.self]
    )
}

struct ProbeI2C: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "i2c",
        abstract: "List I2C buses and the addresses that answer (like i2cdetect), and check a PCA9685.",
        discussion: "With --rig, checks the PCA9685 the rig file names by reading MODE1 and PRE_SCALE."
    )

    @Option(help: ArgumentHelp("A rig file with a pca9685 output to check.", valueName: "rig.json"))
    var rig: String?

    func run() throws {
        let scans = I2CProbe.scanAllBuses()
        if scans.isEmpty {
            print("no I2C buses (/dev/i2c-*): enable I2C (raspi-config → Interface Options → I2C, or dtparam=i2c_arm=on) and load i2c-dev")
        }
        for scan in scans {
            if let error = scan.error {
                print("\(scan.path): \(error)")
                continue
            }
            let found = scan.findings.map { finding in
                "0x" + String(finding.address, radix: 16) + (finding.state == .inUseByDriver ? " (in use by a kernel driver)" : "")
            }
            print("\(scan.path): \(found.isEmpty ? "nothing answered" : found.joined(separator: ", "))")
        }
        guard let rigPath = rig else { return }
        let config = try OutputDrivers.pca9685(FileLoading.loadRig(rigPath), file: rigPath)
        do throws(I2CError) {
            let bus = try LinuxI2CBus(path: config.bus)
            print(try I2CProbe.checkPCA9685(bus: bus, address: config.address))
        } catch {
            printError("error: \(error)")
            throw ExitCode(1)
        }
    }
}
