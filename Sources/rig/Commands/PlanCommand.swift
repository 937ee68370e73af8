import ArgumentParser
import RigCore

struct PlanCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "plan",
        abstract: "Print the shots (or steps) a stepped program will take, in order."
    )

    @Argument(help: "A program file (.json).")
    var file: String

    @Flag(help: "Print CSV (index,label,axis positions…) instead of a table.")
    var csv = false

    func run() throws {
        let program = try PreparedProgram.load(file).program
        let rig = program.rig
        guard program.isStepped else {
            printError("\(file): error: $.kind: \"\(program.kind.rawValue)\" is a continuous program; `rig plan` prints stepped programs (steps, panorama, timelapse)")
            throw ExitCode(2)
        }
        if let plan = program.panorama {
            print("\(file): panorama of \(plan.shots.count) shots in \(plan.rows) row\(plan.rows == 1 ? "" : "s") (\(plan.shotsPerRow.map(String.init).joined(separator: ", ")) per row)")
            print("real overlap: horizontal ≥ \(percent(plan.horizontalOverlap, digits: 1)), vertical \(plan.rows > 1 ? percent(plan.verticalOverlap, digits: 1) : "n/a")")
        } else {
            print("\(file): \(program.steps.count) steps (\(program.kind.rawValue))")
        }
        if csv {
            print((["index", "label"] + rig.axes.map(\.name)).joined(separator: ","))
        }
        for (i, step) in program.steps.enumerated() {
            let pose = rig.axes.indices.map { fixed(step.pose[$0], 2) }
            if csv {
                print(([String(i + 1), "\"\(step.label)\""] + pose).joined(separator: ","))
            } else {
                let axes = rig.axes.indices.map { "\(rig.axes[$0].name) \(pose[$0])\(rig.axes[$0].unit)" }.joined(separator: "  ")
                print(String(i + 1).leftPadded(to: 4) + "  " + step.label.padding(toLength: 28, withPad: " ", startingAt: 0) + axes)
            }
        }
    }
}
