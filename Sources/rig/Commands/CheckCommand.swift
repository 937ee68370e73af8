import ArgumentParser
import RigCore

struct CheckCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Validate a rig or program file and check every frame against the limits.",
        discussion: """
            For a program: plays it through the motion engine (every step advanced at once) and \
            checks every frame against the soft limits, maxVelocity and maxAcceleration of every \
            axis, and the maxJerk of planned moves (lead-in, moves between steps, park; keyframe \
            paths are the user's curves and are not judged on jerk). Prints the worst margin per axis. Exit 0 feasible, 1 infeasible, 2 malformed.
            """
    )

    @Argument(help: "A program or rig file (.json).")
    var file: String

    func run() throws {
        // One read, one parse: large programs (a million keyframes) are checked in seconds.
        let loaded: Program
        switch try FileLoading.loadRigOrProgram(file) {
        case .rig(let rig):
            print("\(file): valid rig \"\(rig.name)\": \(rig.axes.count) axes on \(rig.output.typeName) at \(format(rig.loopRateHz)) Hz")
            for line in ResolutionReport.describe(rig: rig) { print(line) }
            return
        case .program(let program):
            loaded = program
        }
        let prepared = try PreparedProgram.prepare(loaded)
        let program = prepared.program
        let report = FeasibilityChecker.check(
            rig: program.rig, motion: program.motion, startPose: prepared.startPose,
            shooting: ShootSetup.checkPlan(program))
        for line in CheckReport.describe(report, program: program) { print(line) }
        for line in ResolutionReport.describe(program: program) { print(line) }
        for miss in report.intervalMisses { print("\(file): error: \(miss)") }
        if !report.feasible || !report.intervalMisses.isEmpty { throw ExitCode(1) }
    }
}
