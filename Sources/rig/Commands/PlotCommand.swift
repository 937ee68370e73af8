import ArgumentParser
import FoundationEssentials
import Glibc
import RigCore
import RigRuntime
import RigStitch

struct PlotCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "plot",
        abstract: "Draw a program as SVG: per-axis position, velocity and acceleration over time.",
        discussion: "Keyframes are marked, soft limits shaded, frames that break a limit drawn in red."
    )

    @Argument(help: "A program file (.json).")
    var file: String

    @Option(name: .shortAndLong, help: ArgumentHelp("Where to write the SVG.", valueName: "out.svg"))
    var output: String

    func run() throws {
        // The one output-path check: never the program or its rig, a FIFO or a directory.
        do { try OutputPath.check(output, option: "-o", inputs: PlayCommand.inputFiles(program: file)) } catch {
            printError("error: \(error)")
            throw ExitCode(2)
        }
        let prepared = try PreparedProgram.load(file)
        let svg = PlotRenderer.svg(program: prepared.program, startPose: prepared.startPose)
        do {
            try AtomicFile.write(svg, to: output)
        } catch {
            printError("\(output): error: cannot write the plot: \(error)")
            throw ExitCode(1)
        }
        print("wrote \(output)")
    }
}
