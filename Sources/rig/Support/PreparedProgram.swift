import ArgumentParser
import Logging
import RigCore
import RigRuntime

/// A program as `rig play` will run it: loaded, its output built (no hardware touched
/// yet), and planned from where the rig really starts — home, or where the output
/// remembers the last run left it. `check`, `plan` and `plot` use the same, so they
/// describe exactly what `play` does.
struct PreparedProgram {
    var program: Program
    var startPose: [Double]
    /// Nil when the output could not be built (check/plan/plot still work from home).
    var output: Output?
    var restoredAxes: [String]
    var clampedAxes: [String]

    static func load(_ path: String, outputOverride: OutputConfig? = nil, logger: Logger = Logger(label: "rig")) throws(ExitCode) -> PreparedProgram {
        try prepare(FileLoading.loadProgram(path), outputOverride: outputOverride, logger: logger)
    }

    /// As `load`, for a program already parsed.
    static func prepare(_ program: Program, outputOverride: OutputConfig? = nil, logger: Logger = Logger(label: "rig")) -> PreparedProgram {
        var program = program
        if let outputOverride { program.rig.output = outputOverride }
        let output = try? makeOutput(for: program.rig, logger: logger)
        let start = output.map { StartPose.resolve(rig: program.rig, output: $0) }
            ?? .home(program.rig)
        return PreparedProgram(program: program.startingFrom(start.pose), startPose: start.pose, output: output,
                               restoredAxes: start.restoredAxes, clampedAxes: start.clampedAxes)
    }
}
