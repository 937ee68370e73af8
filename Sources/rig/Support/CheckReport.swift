import Foundation
import RigCore

/// Prints what `FeasibilityChecker` found: the worst margin per axis, and every
/// problem located by axis, time and step.
enum CheckReport {
    static func describe(_ report: FeasibilityReport, program: Program) -> [String] {
        let rig = program.rig
        var lines: [String] = []
        let what: String
        switch program.motion {
        case .continuous(_, let duration): what = "\(rounded(duration)) s keyframe path"
        case .stepped(let steps): what = "\(steps.count) step\(steps.count == 1 ? "" : "s")"
        }
        lines.append("\(program.file): \(report.feasible ? "feasible" : "INFEASIBLE"): \(what), \(rounded(report.durationSeconds)) s of motion at \(format(rig.loopRateHz)) Hz on rig \"\(rig.name)\"")
        let header = ["axis", "range used", "soft limits", "limit margin", "peak velocity", "peak accel.", "peak jerk (moves)"]
        var rows: [[String]] = [header]
        for (i, axis) in rig.axes.enumerated() {
            let m = report.margins[i]
            let u = axis.unit
            let used = m.minPosition.isFinite ? "\(fixed1(m.minPosition))…\(fixed1(m.maxPosition))\(u)" : "-"
            let margin = m.minPosition.isFinite ? min(m.minPosition - axis.softMin, axis.softMax - m.maxPosition) : 0
            rows.append([
                axis.name, used, "\(format(axis.softMin))…\(format(axis.softMax))\(u)", "\(fixed1(margin))\(u)",
                "\(fixed1(m.peakVelocity))/\(format(axis.maxVelocity))\(u)/s (\(percent(m.peakVelocity / axis.maxVelocity)))",
                "\(fixed1(m.peakAcceleration))/\(format(axis.maxAcceleration))\(u)/s² (\(percent(m.peakAcceleration / axis.maxAcceleration)))",
                "\(fixed1(m.peakJerk))/\(format(axis.maxJerk))\(u)/s³ (\(percent(m.peakJerk / axis.maxJerk)))",
            ])
        }
        let widths = header.indices.map { c in rows.map { $0[c].count }.max() ?? 0 }
        for row in rows {
            lines.append("  " + row.indices.map { c in row[c].padding(toLength: widths[c], withPad: " ", startingAt: 0) }.joined(separator: "  "))
        }
        for problem in report.problems {
            lines.append("\(program.file): error: \(problem)")
        }
        return lines
    }

    private static func fixed1(_ v: Double) -> String { String(format: "%.1f", v) }
    private static func percent(_ f: Double) -> String { "\(Int((f * 100).rounded()))%" }
}
