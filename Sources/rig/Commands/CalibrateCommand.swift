import ArgumentParser
import RigCore
import RigDevices
import RigFormat
import RigPCA9685

struct CalibrateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "calibrate",
        abstract: "Derive calibration values from measurements.",
        subcommands: [CalibrateOscillator.self]
    )
}

struct CalibrateOscillator: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "oscillator",
        abstract: "Compute a PCA9685's real oscillator frequency from a measured output frequency.",
        discussion: """
            Play anything on the rig, measure the PWM frequency on one channel (frequency counter, \
            scope, logic analyser), then run this with the rig file and the measurement. Write the \
            printed value into the rig file's output.oscillatorHz.
            """
    )

    @Option(help: ArgumentHelp("The output frequency you measured, in Hz.", valueName: "hz"))
    var measuredHz: Double

    @Option(help: ArgumentHelp("The rig file (its pca9685 frequencyHz and oscillatorHz were in use).", valueName: "rig.json"))
    var rig: String?

    @Option(help: "The frequencyHz that was configured (without --rig).")
    var frequencyHz: Double = 50

    @Option(help: "The oscillatorHz that was configured (without --rig).")
    var oscillatorHz: Double = 25_000_000

    func run() throws {
        var frequency = frequencyHz
        var oscillator = oscillatorHz
        if let rig {
            let config = try OutputDrivers.pca9685(FileLoading.loadRig(rig), file: rig)
            frequency = config.frequencyHz
            oscillator = config.oscillatorHz
        }
        do throws(PCA9685CalibrationError) {
            let calibrated = try PCA9685Math.calibratedOscillator(measuredHz: measuredHz, frequencyHz: frequency, oscillatorHz: oscillator)
            print("oscillatorHz: \(fixed(calibrated, 0))")
            let error = (calibrated / oscillator - 1) * 100
            print("(the configured \(fixed(oscillator, 0)) Hz was off by \(error >= 0 ? "+" : "")\(fixed(error, 2)) %: pulse widths were off by as much)")
        } catch {
            printError("error: \(error)")
            throw ExitCode(2)
        }
    }
}
