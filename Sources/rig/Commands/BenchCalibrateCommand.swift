import ArgumentParser
import FoundationEssentials
import RigCore
import RigFormat

/// `rig bench calibrate`: `rig calibrate servo` against a simulated servo whose curve it
/// does not know.
struct BenchCalibrateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "calibrate",
        abstract: "rig calibrate servo's table against a simulated servo with a hidden non-linear curve.",
        discussion: """
            Drives rig calibrate servo's calibrator with a scripted user against the simulated \
            servo (PCA9685 counts at 50 Hz, --deadband, its slew) whose real angle ↔ pulse curve \
            is non-linear and hidden from it: widen the range to 900…2100 µs, a point every \
            --steps µs approached from below, each angle read to 0.1° once the horn stopped; \
            then a deadband search (reverse, 1 µs at a time). Reports the worst and mean error \
            of the table against the truth over the span, 1 µs apart, and the deadband found. \
            Deterministic.
            """)

    @Option(parsing: .upToNextOption, help: ArgumentHelp("Pulses between points, µs (multiples of 50).", valueName: "µs"))
    var steps: [Double] = [100, 200, 300]

    @Option(help: ArgumentHelp("The simulated servo's deadband, degrees.", valueName: "deg"))
    var deadband = 0.4

    @Flag(help: "Print the figures as JSON.")
    var json = false

    func validate() throws {
        guard !steps.isEmpty, steps.allSatisfy({ $0 >= 50 && $0 <= 600 && $0.truncatingRemainder(dividingBy: 50) == 0 }) else {
            throw ValidationError("--steps: valid: 50…600 µs, multiples of 50")
        }
        guard (0...5).contains(deadband) else { throw ValidationError("--deadband \(format(deadband)): valid: 0…5°") }
    }

    func run() throws {
        var rows: [(Double, CalibrateBench.Figures)] = []
        do {
            for step in steps { rows.append((step, try CalibrateBench.run(stepMicroseconds: step, deadbandDegrees: deadband))) }
        } catch {
            printError("error: the simulated calibration failed (a bug in rig bench): \(error)")
            throw ExitCode(1)
        }
        if json {
            let items = rows.map { step, f in
                "{\"step_us\": \(number(step)), \"points\": \(f.points), \"worst_error_deg\": \(number(f.worstErrorDegrees)), \"mean_error_deg\": \(number(f.meanErrorDegrees)), "
                    + "\"deadband_us\": \(f.deadbandMicroseconds.map(number) ?? "null"), \"deadband_deg\": \(f.deadbandDegrees.map(number) ?? "null"), \"stayed_in_range\": \(f.stayedInRange)}"
            }
            print("{\"deadband_deg\": \(number(deadband)), \"span_us\": [900, 2100], \"rows\": [\(items.joined(separator: ", "))]}")
            return
        }
        print(
            "rig bench calibrate: a simulated servo (PCA9685 at 50 Hz, deadband \(format(deadband))°) with a hidden curve of \(fixed(CalibrateBench.hiddenAngle(pulse: 2100) - CalibrateBench.hiddenAngle(pulse: 900), 1))° over 900…2100 µs; angles read to 0.1°"
        )
        print("step µs  points  worst error  mean error  deadband found  every pulse in the range shown")
        for (step, f) in rows {
            let deadbandText = f.deadbandMicroseconds.map { "\(format($0)) µs ≈ \(fixed(f.deadbandDegrees ?? 0, 2))°" } ?? "not found"
            print(
                format(step).padded(toLength: 9) + "\(f.points)".padded(toLength: 8) + (fixed(f.worstErrorDegrees, 3) + "°").padded(toLength: 13)
                    + (fixed(f.meanErrorDegrees, 3) + "°").padded(toLength: 12) + deadbandText.padded(toLength: 16) + (f.stayedInRange ? "yes" : "NO"))
        }
    }
}
