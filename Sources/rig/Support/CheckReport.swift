import FoundationEssentials
import Glibc
import RigCore
import RigFormat

/// Prints what `FeasibilityChecker` found: the worst margin per axis, and every
/// violating interval located by axis, time and step (the first `maxListed` of them).
enum CheckReport {
    /// Problem lines printed before "… N more".
    static let maxListed = 50

    static func describe(_ report: FeasibilityReport, program: Program) -> [String] {
        let rig = program.rig
        var lines: [String] = []
        let what: String
        switch program.motion {
        case .continuous(_, let duration): what = "\(rounded(duration)) s keyframe path"
        case .stepped(let steps): what = "\(steps.count) step\(steps.count == 1 ? "" : "s")"
        }
        let verdict = report.unchecked != nil ? "NOT CHECKED" : report.feasible ? "feasible" : "INFEASIBLE"
        lines.append(
            "\(program.file): \(verdict): \(what), \(rounded(report.durationSeconds)) s of motion at \(format(rig.loopRateHz)) Hz on rig \"\(rig.name)\"")
        let header = ["axis", "range used", "soft limits", "limit margin", "peak velocity", "peak accel.", "peak jerk (moves)"]
        var rows: [[String]] = [header]
        for (i, axis) in rig.axes.enumerated() {
            let m = report.margins[i]
            let u = axis.unit
            let used = m.minPosition.isFinite ? "\(fixed(m.minPosition, 1))…\(fixed(m.maxPosition, 1))\(u)" : "-"
            let margin = m.minPosition.isFinite ? min(m.minPosition - axis.softMin, axis.softMax - m.maxPosition) : 0
            rows.append([
                axis.name, used, "\(format(axis.softMin))…\(format(axis.softMax))\(u)", "\(fixed(margin, 1))\(u)",
                "\(fixed(m.peakVelocity, 1))/\(format(axis.maxVelocity))\(u)/s (\(percent(m.peakVelocity / axis.maxVelocity)))",
                "\(fixed(m.peakAcceleration, 1))/\(format(axis.maxAcceleration))\(u)/s² (\(percent(m.peakAcceleration / axis.maxAcceleration)))",
                "\(fixed(m.peakJerk, 1))/\(format(axis.maxJerk))\(u)/s³ (\(percent(m.peakJerk / axis.maxJerk)))",
            ])
        }
        let widths = header.indices.map { c in rows.map { $0[c].count }.max() ?? 0 }
        for row in rows {
            lines.append("  " + row.indices.map { c in row[c].padded(toLength: widths[c]) }.joined(separator: "  "))
        }
        if let unchecked = report.unchecked {
            lines.append("\(program.file): error: not checked: \(unchecked)")
        }
        for problem in report.problems.prefix(maxListed) {
            lines.append("\(program.file): error: \(problem)")
        }
        if report.problemCount > maxListed {
            let more = report.problemCount - maxListed
            lines.append("\(program.file): error: … \(more) more violation\(more == 1 ? "" : "s") (intervals of consecutive frames over a limit)")
        }
        return lines
    }
}
