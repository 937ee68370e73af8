import ArgumentParser
import FoundationEssentials
import Glibc
import RigCore
import RigFormat

struct BenchMovesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "moves",
        abstract: "What jerk-limited (S-curve) moves cost in move time against trapezoids, for a stepped program.",
        discussion: """
            Plans every move of PROGRAM (the lead-in from the rig's home pose to the first step, \
            each move between steps, the park) both ways: as rig plans them (S-curves under \
            maxVelocity, maxAcceleration and maxJerk, all axes arriving together, whole ticks) \
            and as round 1 did (trapezoids under maxVelocity and maxAcceleration alone). Reports \
            the total and the worst move. Planning only: no time is measured, so the figures do \
            not depend on the machine.
            """
    )

    @Argument(help: ArgumentHelp("A stepped program file (.json), e.g. rigs/pano.json.", valueName: "program"))
    var program: String

    @Flag(help: "Print the figures as JSON.")
    var json = false

    func run() throws {
        let loaded = try FileLoading.loadProgram(program)
        let rig = loaded.rig
        guard case .stepped(let steps) = loaded.motion, !steps.isEmpty else {
            printError("error: \(program) is not a stepped program with steps; rig bench moves compares step moves")
            throw ExitCode(2)
        }
        var poses = [rig.homePose] + steps.map(\.pose)
        poses.append(rig.axes.indices.map { rig.axes[$0].park ?? poses[poses.count - 1][$0] })
        let dt = rig.tickSeconds
        var sCurveTicks = 0
        var trapezoidTicks = 0
        var worst = (move: 0, extra: 0.0)
        var move = PoseMove()
        for k in 1..<poses.count {
            move.plan(from: poses[k - 1], to: poses[k], axes: rig.axes, tickSeconds: dt)
            var longest = 0.0
            for i in rig.axes.indices {
                longest = max(
                    longest,
                    TrapezoidProfile.minimumDuration(
                        distance: poses[k][i] - poses[k - 1][i],
                        maxVelocity: rig.axes[i].maxVelocity,
                        maxAcceleration: rig.axes[i].maxAcceleration))
            }
            let trapezoid = min(tickCount(seconds: longest, tickSeconds: dt, slack: 1e-9), PoseMove.maxTicks)
            sCurveTicks += move.ticks
            trapezoidTicks += trapezoid
            let extra = Double(move.ticks - trapezoid) * dt
            if extra > worst.extra { worst = (k, extra) }
        }
        let s = Double(sCurveTicks) * dt
        let t = Double(trapezoidTicks) * dt
        let moves = poses.count - 1
        if json {
            print(
                "{\"program\": \"\(program)\", \"moves\": \(moves), \"scurve_s\": \(number(s)), \"trapezoid_s\": \(number(t)), "
                    + "\"extra_s\": \(number(s - t)), \"extra_ratio\": \(number(t > 0 ? s / t : 1)), \"worst_move\": \(worst.move), "
                    + "\"worst_extra_s\": \(number(worst.extra))}")
            return
        }
        print("rig bench moves: \(program), \(moves) moves (lead-in, \(steps.count - 1) between steps, park) at \(format(rig.loopRateHz)) Hz")
        print(
            "S-curve (maxJerk): \(fixed(s, 2)) s   trapezoid: \(fixed(t, 2)) s   extra: \(fixed(s - t, 2)) s (\(t > 0 ? percent(s / t - 1, digits: 1) : "0.0%"))"
        )
        print("worst move: #\(worst.move), \(fixed(worst.extra, 2)) s longer")
    }
}
