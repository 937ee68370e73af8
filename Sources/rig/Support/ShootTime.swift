import FoundationEssentials
import Glibc
import RigCore
import RigFormat
import RigRuntime
import SystemPackage

/// How long a stepped shoot takes and when it ends, for `rig check` and `rig plan`: the
/// frames (brackets and `shotsPerStep` included) and the time the check played it in,
/// moves, settles and every frame's exposure and card write as the rig file gives them.
enum ShootTime {
    /// - Parameters:
    ///   - measured: the frames' pace in the program's last run (the state directory's shot
    ///     logs, `MeasuredFramePace.last`); nil: the rig file's timing alone.
    ///   - settles: with a measured settle, each step's expected one (`SettleBench.forecast`):
    ///     the shoot is timed with them (`settleExtraSeconds`); nil: the fixed settles.
    static func lines(
        _ program: Program, report: FeasibilityReport, measured: MeasuredFramePace? = nil, settles: [SettleForecast.StepSettle]? = nil,
        now: Date = Date()
    ) -> [String] {
        let settleExtraSeconds = settles.flatMap { Self.settleExtraSeconds(program, $0) }
        guard program.isStepped, report.unchecked == nil else { return [] }
        let steps = program.steps.count
        let perStep = program.rig.camera == nil ? 0 : program.shoot.shotsPerStep
        let frames = program.frameCount
        var seconds = report.durationSeconds + (settleExtraSeconds ?? 0)
        let paced: Bool =
            switch program.trigger {
            case .auto, .interval: true
            default: false
            }
        // The last run's frames held the rig longer than the rig file says (the camera's card
        // write and confirmation): a program that moves on as each frame ends takes that
        // much longer; one paced by an interval keeps its time, unless a frame outlasts it.
        var measuredLine: String?
        var timedWithMeasure = false
        if let measured, frames > 0, let planned = program.shotTiming?.shotSeconds, measured.medianSeconds > planned + 0.05 {
            let log = FilePath(measured.log).lastComponent?.string ?? measured.log
            let pace =
                "its last run's frames held the rig \(fixed(measured.medianSeconds, 2)) s each (median of \(measured.frames), \(log)), not the \(fixed(planned, 2)) s the rig file gives"
            if case .interval(let interval) = program.trigger {
                measuredLine =
                    measured.medianSeconds >= interval
                    ? "\(program.file): warning: \(pace): longer than the \(fixed(interval, 1)) s interval, so frames would be missed; give the camera \"afterShotMs\" and check again"
                    : "\(program.file): shoot: \(pace); the \(fixed(interval, 1)) s interval holds it"
            } else {
                seconds += Double(frames) * (measured.medianSeconds - planned)
                timedWithMeasure = true
                measuredLine = "\(program.file): shoot: \(pace): timed with it"
            }
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
        var basis =
            frames == 0
            ? "moves and settles"
            : timedWithMeasure
                ? "moves, settles and each frame as the last run measured it"
                : "moves, settles, exposures and the camera's write time as the rig file gives it"
        if settleExtraSeconds != nil { basis += "; each measured settle as expected (rig check lists them)" }
        return ["\(program.file): shoot: \(what), \(time) (\(basis))"] + (measuredLine.map { [$0] } ?? [])
    }

    /// The expected settles' time beyond the steps' fixed settles (which the check timed);
    /// nil for a shoot an interval paces (its time is the interval's).
    static func settleExtraSeconds(_ program: Program, _ settles: [SettleForecast.StepSettle]) -> Double? {
        if case .interval = program.trigger { return nil }
        return settles.reduce(0.0) { $0 + $1.seconds - (program.steps.indices.contains($1.step) ? program.steps[$1.step].settleSeconds : 0) }
    }

    /// The frames' pace in the last run of the program at `path` (its logs in the state
    /// directory, where `rig play` and `rig serve` write them).
    static func lastPace(of path: String) -> MeasuredFramePace? {
        StateDirectory.default().flatMap { MeasuredFramePace.last(of: path, in: RunLogDirectory(stateDirectory: $0)) }
    }

    /// "1 h 05 min", "12 min 30 s", "45 s".
    static func duration(_ seconds: Double) -> String { StartClock.duration(seconds) }
}
