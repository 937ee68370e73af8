import ArgumentParser
import Foundation
import RigCore

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
        let prepared = try PreparedProgram.load(file)
        let svg = PlotRenderer.svg(program: prepared.program, startPose: prepared.startPose)
        do {
            try svg.write(toFile: output, atomically: true, encoding: .utf8)
        } catch {
            printError("\(output): error: cannot write the plot: \(error.localizedDescription)")
            throw ExitCode(1)
        }
        print("wrote \(output)")
    }
}
