import ArgumentParser
import Logging
import RigCore
import RigDevices
import RigFormat
import RigRuntime

/// A program as `rig play` will run it: loaded, its output built (no hardware touched
/// yet), and planned from where the rig really starts — home, or where the output
/// remembers the last run left it. `check`, `plan` and `plot` use the same, so they
/// describe exactly what `play` does.
struct PreparedProgram {
    var program: Program
    /// Where the rig starts (home, or where the output remembers the last run left it).
    var start: StartPose.Resolved
    /// Nil when the output could not be built (check/plan/plot still work from home).
    var output: Output?

    var startPose: [Double] { start.pose }

    static func load(_ path: String, outputOverride: OutputConfig? = nil, logger: Logger = Logger(label: "rig")) throws(ExitCode) -> PreparedProgram {
        try prepare(FileLoading.loadProgram(path), outputOverride: outputOverride, logger: logger)
    }

    /// As `load`, for a program already parsed.
    /// Refuses (exit 2) a program whose motion is over `Bounds.maxTicks`, before any
    /// simulation.
    static func prepare(_ program: Program, outputOverride: OutputConfig? = nil, logger: Logger = Logger(label: "rig")) throws(ExitCode) -> PreparedProgram {
        var program = program
        if let outputOverride { program.rig.output = outputOverride }
        let output = try? OutputDrivers.make(for: program.rig, logger: logger)
        let start =
            output.map { StartPose.resolve(rig: program.rig, output: $0) }
            ?? .home(program.rig)
        let planned = program.startingFrom(start.pose)
        // Bounded before any simulation: check, plan, plot and play all start here.
        let ticks = MotionBudget.ticks(rig: planned.rig, motion: planned.motion, startPose: start.pose)
        guard ticks <= Double(Bounds.maxTicks) else {
            let reason = UncheckedReason.tooLong(estimatedTicks: ticks, maxTicks: Bounds.maxTicks, loopRateHz: planned.rig.loopRateHz)
            printError(FileError(file: program.file, location: SourceLocation(line: 1, column: 1), path: "$", message: reason.description).description)
            throw ExitCode(2)
        }
        return PreparedProgram(program: planned, start: start, output: output)
    }
}
