import RigBLEControl
import RigCore
import RigFormat
import RigPCA9685
import RigRuntime
import RigStitch

/// Rig and program files through everything `rig check`, `plan` and `plot` do with them:
/// UTF-8 decoding, the JSON parser, the rig and program parsers, the panorama planner,
/// the work budget, the feasibility check (with a small tick budget so each input stays
/// fast), the report text and the plot. Nothing may trap, and every error line must stay
/// short however long the input.
enum RigFileTarget {
    /// The rig a program's `"rig": "<path>"` gets (any path).
    static let rigText = #"{"axes": [{"name": "pan", "channel": 0, "softLimits": [-80, 80]}, {"name": "tilt", "channel": 1, "maxVelocity": 60}]}"#
    static let maxTicks = 20_000

    static func run(_ data: [UInt8]) {
        let text: String
        do { text = try UTF8Text.decode(data, file: "f.json") } catch {
            checkShort(error)
            return
        }
        do {
            // The same document as a rig and as a program: both parsers see every input.
            if let rig = try? RigParser.parse(text: text, file: "r.json") { drivers(rig) }
            let program = try ProgramParser.parse(text: text, file: "p.json") { _, _ throws(FileError) in (rigText, "rig.json") }
            exercise(program)
        } catch {
            checkShort(error)
        }
    }

    /// The output section through the driver that owns it, as `rig check` does.
    static func drivers(_ rig: Rig) {
        do {
            switch rig.output.type {
            case PCA9685OutputConfig.type: _ = try PCA9685OutputConfig.parse(rig.output, axes: rig.axes).quantum
            case BLEControlOutputConfig.type: _ = try BLEControlOutputConfig.parse(rig.output, axes: rig.axes)
            default: _ = try SimOutputConfig.parse(rig.output, axes: rig.axes)
            }
        } catch {
            checkShort(error)
        }
    }

    static func checkShort(_ error: FileError) {
        let line = error.description
        guard line.utf8.count < 4000 else { fuzzFail("an error line of \(line.utf8.count) bytes") }
    }

    static func exercise(_ program: Program) {
        let rig = program.rig
        let start = rig.homePose
        let planned = program.startingFrom(start)
        let budget = MotionBudget.ticks(rig: rig, motion: planned.motion, startPose: start)
        let report = FeasibilityChecker.check(rig: rig, motion: planned.motion, startPose: start, maxTicks: maxTicks)
        if budget > Double(maxTicks) {
            guard case .tooLong = report.unchecked else { fuzzFail("a program over budget (\(budget) ticks) was simulated") }
        }
        if report.feasible, report.unchecked != nil { fuzzFail("feasible without checking every frame") }
        if report.unchecked == nil, Double(report.ticks) > budget { fuzzFail("the budget \(budget) is below the \(report.ticks) ticks simulated") }
        var length = 0
        for problem in report.problems { length += problem.description.utf8.count }
        if let unchecked = report.unchecked { length += unchecked.description.utf8.count }
        for m in report.margins { length += fixed(m.minPosition, 1).count + percent(m.peakVelocity / 3).count }
        if let plan = planned.panorama { length += plan.shotsPerRow.count + percent(plan.horizontalOverlap, digits: 1).count }
        for step in planned.steps.prefix(50) { length += step.pose.map { fixed($0, 2) }.joined().count }
        if budget <= 5_000 { length += PlotRenderer.svg(program: planned, startPose: start, maxTicks: 5_000).utf8.count }
        if length < 0 { fuzzFail("unreachable") }
    }
}
