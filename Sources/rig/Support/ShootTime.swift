import FoundationEssentials
import Glibc
import RigCore
import RigFormat
import RigRuntime

/// How long a stepped shoot takes and when it ends, for `rig check` and `rig plan`: the
/// frames (brackets and `shotsPerStep` included) and the time the check played it in,
/// moves, settles and every frame's exposure and card write as the rig file gives them.
enum ShootTime {
    static func lines(_ program: Program, report: FeasibilityReport, now: Date = Date()) -> [String] {
        guard program.isStepped, report.unchecked == nil else { return [] }
        let steps = program.steps.count
        let perStep = program.rig.camera == nil ? 0 : program.shoot.shotsPerStep
        let frames = program.frameCount
        let seconds = report.durationSeconds
        let paced: Bool =
            switch program.trigger {
            case .auto, .interval: true
            default: false
            }
        let what =
            frames > 0
            ? "\(frames) frame\(frames == 1 ? "" : "s") (\(steps) step\(steps == 1 ? "" : "s") × \(perStep))"
            : "\(steps) step\(steps == 1 ? "" : "s"), no camera"
        func shown(_ date: Date) -> String {
            guard let time = LocalTime(date.timeIntervalSince1970) else { return UTCTime.text(date.timeIntervalSince1970, dateToo: true) }
            return "\(time.clock()) \(time.zone)"
        }
        let start = program.start.map { Date(timeIntervalSince1970: $0.unix) } ?? now
        let when = program.start == nil ? "started now" : "started at its start, \(shown(start))"
        let end = shown(start.addingTimeInterval(seconds))
        let time =
            paced
            ? "takes about \(duration(seconds)); \(when), it ends about \(end)"
            : "takes at least \(duration(seconds)) plus the time each step waits for you to advance it (\(when) and advanced at once, it ends about \(end))"
        let basis = frames > 0 ? "moves, settles, exposures and the camera's write time as the rig file gives it" : "moves and settles"
        return ["\(program.file): shoot: \(what), \(time) (\(basis))"]
    }

    /// "1 h 05 min", "12 min 30 s", "45 s".
    static func duration(_ seconds: Double) -> String { StartClock.duration(seconds) }
}
