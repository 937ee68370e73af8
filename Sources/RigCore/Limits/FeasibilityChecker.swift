import RigFormat

/// A limit broken somewhere in a program: one interval of consecutive frames over the
/// same limit on the same axis, located for the user.
public struct FeasibilityProblem: Sendable, Equatable, CustomStringConvertible {
    /// The worst frame of the interval (largest excess over the limit).
    public var violation: LimitViolation
    public var axisName: String
    public var unit: String
    /// When the first violating frame of the interval was emitted.
    public var timeSeconds: Double
    /// When the last one was (equal to `timeSeconds` for a single frame).
    public var endSeconds: Double
    /// Violating frames in the interval.
    public var frames: Int
    /// "keyframe path", "lead-in", "move to shot 3 (row 1, column 3)", "park".
    public var during: String

    public var description: String {
        let v = violation
        let what: String
        let worst = frames > 1 ? "up to " : ""
        switch v.limit {
        case .softMin:
            what = "position \(frames > 1 ? "down to " : "")\(rounded(v.value))\(unit) is beyond the \(v.limit.rawValue) \(rounded(v.allowed))\(unit)"
        case .softMax:
            what = "position \(worst)\(rounded(v.value))\(unit) is beyond the \(v.limit.rawValue) \(rounded(v.allowed))\(unit)"
        case .velocity:
            what = "velocity \(worst)\(rounded(v.value))\(unit)/s exceeds maxVelocity \(rounded(v.allowed))\(unit)/s"
        case .acceleration:
            what = "acceleration \(worst)\(rounded(v.value))\(unit)/s² exceeds maxAcceleration \(rounded(v.allowed))\(unit)/s²"
        case .jerk:
            what = "jerk \(worst)\(rounded(v.value))\(unit)/s³ exceeds maxJerk \(rounded(v.allowed))\(unit)/s³"
        }
        let when = frames > 1 ? "from t=\(rounded(timeSeconds))s to \(rounded(endSeconds))s" : "at t=\(rounded(timeSeconds))s"
        return "axis \"\(elided(axisName))\" \(when) (\(during)): \(what)"
    }
}

/// Why a program was not (fully) checked.
public enum UncheckedReason: Sendable, Equatable, CustomStringConvertible {
    /// The motion would take more ticks than the budget: refused before simulating.
    case tooLong(estimatedTicks: Double, maxTicks: Int, loopRateHz: Double)
    /// The simulation reached the budget before the program finished.
    case budgetReached(maxTicks: Int, loopRateHz: Double)

    public var description: String {
        switch self {
        case .tooLong(let ticks, let maxTicks, let rate):
            "the program moves for about \(rounded(ticks / rate)) s (\(format(ticks.rounded(.up))) ticks at \(format(rate)) Hz); valid: at most \(maxTicks) ticks (\(rounded(Double(maxTicks) / rate)) s at \(format(rate)) Hz): split it, or raise maxVelocity/maxAcceleration"
        case .budgetReached(let maxTicks, let rate):
            "the check stopped after \(maxTicks) ticks (\(rounded(Double(maxTicks) / rate)) s at \(format(rate)) Hz) before the program ended; the rest was not checked"
        }
    }
}

/// A step whose shot cannot start the interval after the previous one: its move,
/// backlash overshoot, settle time and the previous shot (with its after-shot wait)
/// take longer.
public struct IntervalMiss: Sendable, Equatable, CustomStringConvertible {
    /// 0-based.
    public var step: Int
    public var label: String
    /// From the previous shot's start to this one's, as played.
    public var neededSeconds: Double
    public var intervalSeconds: Double
    /// Where `neededSeconds` went, as played: the previous step's exposures (focus
    /// included), the camera's waits between and after its frames, the move (and any
    /// backlash overshoot), the settle.
    public var exposureSeconds = 0.0
    public var cameraSeconds = 0.0
    public var moveSeconds = 0.0
    public var settleSeconds = 0.0

    public init(step: Int, label: String, neededSeconds: Double, intervalSeconds: Double) {
        self.step = step
        self.label = label
        self.neededSeconds = neededSeconds
        self.intervalSeconds = intervalSeconds
    }

    public var description: String {
        let name = label == "step \(step + 1)" ? label : "step \(step + 1) (\(label))"
        return "\(name) needs \(rounded(neededSeconds)) s from the previous shot's start (\(split)); the interval is \(rounded(intervalSeconds)) s"
    }

    /// "exposure 3.5 s, camera 0.3 s, move 0 s, settle 0.2 s".
    public var split: String {
        "exposure \(rounded(exposureSeconds)) s, camera \(rounded(cameraSeconds)) s, move \(rounded(moveSeconds)) s, settle \(rounded(settleSeconds)) s"
    }

    /// The misses said once: one line for one, else how many, which steps, and the worst
    /// with its split (hundreds of frames of a ramp or a still timelapse make one line).
    public static func summary(_ misses: [IntervalMiss]) -> String? {
        guard let worst = misses.max(by: { $0.neededSeconds - $0.intervalSeconds < $1.neededSeconds - $1.intervalSeconds }) else { return nil }
        guard misses.count > 1 else { return worst.description }
        return "\(misses.count) steps cannot keep their interval (\(ranges(misses.map { $0.step + 1 }))); the worst: \(worst)"
    }

    /// "2–10, 14, 20–22" of sorted 1-based step numbers, elided past the first eight runs.
    static func ranges(_ numbers: [Int]) -> String {
        var runs: [(Int, Int)] = []
        for n in numbers.sorted() {
            if let last = runs.last, last.1 + 1 == n { runs[runs.count - 1].1 = n } else { runs.append((n, n)) }
        }
        let shown = runs.prefix(8).map { $0.0 == $0.1 ? "step \($0.0)" : "steps \($0.0)–\($0.1)" }
        return shown.joined(separator: ", ") + (runs.count > 8 ? ", …" : "")
    }
}

/// What `rig check` found.
public struct FeasibilityReport: Sendable {
    /// Violating intervals in time order, at most `FeasibilityChecker.maxStoredProblems`.
    public var problems: [FeasibilityProblem]
    /// All violating intervals found, including those not stored.
    public var problemCount: Int
    public var margins: [AxisMargins]
    public var ticks: Int
    public var durationSeconds: Double
    /// Non-nil when not every frame was checked: then the program is never feasible.
    public var unchecked: UncheckedReason?
    /// Steps that cannot keep `interval:S` (empty without an interval).
    public var intervalMisses: [IntervalMiss] = []
    /// When each step's first shot starts (0-based step → program seconds); with no
    /// camera, when it is ready.
    public var shotStartSeconds: [Int: Double] = [:]
    /// Every frame was checked and the limits are kept. An interval a step cannot keep is
    /// a separate refusal (`intervalMisses`): the motion itself is safe.
    public var feasible: Bool { problemCount == 0 && unchecked == nil }
}

/// Plays a whole program through the real step function, advancing every step at once,
/// and checks every frame against every limit.
public enum FeasibilityChecker {
    /// Violating intervals kept in a report (the rest are only counted).
    public static let maxStoredProblems = 1000

    /// - Parameters:
    ///   - shooting: the run's camera timing and interval; shots are timed by the plan
    ///     (`selfTimed` is forced on), so the check sees the moves, holds and slots the
    ///     run will have.
    ///   - firstStep: where a resumed run starts (0-based).
    ///   - maxTicks: the work budget. A program whose `MotionBudget` exceeds it is refused
    ///     without simulating; a simulation that reaches it stops. Either way the report
    ///     says `unchecked` and is not feasible.
    public static func check(
        rig: Rig, motion: Motion, startPose: [Double], shooting: ShootingPlan = .none,
        firstStep: Int = 0, maxTicks: Int = Bounds.maxTicks
    ) -> FeasibilityReport {
        let estimate = MotionBudget.ticks(rig: rig, motion: motion, startPose: startPose, shooting: shooting)
        guard estimate <= Double(maxTicks) else {
            return FeasibilityReport(
                problems: [], problemCount: 0, margins: rig.axes.map { _ in AxisMargins() }, ticks: 0,
                durationSeconds: 0, unchecked: .tooLong(estimatedTicks: estimate, maxTicks: maxTicks, loopRateHz: rig.loopRateHz))
        }
        var plan = shooting
        plan.selfTimed = true
        var player = Player(rig: rig, motion: motion, startPose: startPose, firstStep: firstStep, shooting: plan)
        var starts: [Int: Double] = [:]
        var misses: [IntervalMiss] = []
        var lastStart: Double?
        var missed: Set<Int> = []
        // Where the time since the last shot's start went, in ticks (see `IntervalMiss`).
        var spent = (exposure: 0, camera: 0, move: 0, settle: 0)
        func shotStarted(_ step: Int, _ time: Double) {
            if missed.contains(step), let lastStart, let interval = plan.interval(after: step - 1), case .stepped(let steps) = motion {
                var miss = IntervalMiss(step: step, label: steps[step].label, neededSeconds: time - lastStart, intervalSeconds: interval)
                let dt = rig.tickSeconds
                miss.exposureSeconds = Double(spent.exposure) * dt
                miss.cameraSeconds = Double(spent.camera) * dt
                miss.moveSeconds = Double(spent.move) * dt
                miss.settleSeconds = Double(spent.settle) * dt
                misses.append(miss)
            }
            starts[step] = starts[step] ?? time
            lastStart = time
            spent = (0, 0, 0, 0)
        }
        var monitor = LimitMonitor(axes: rig.axes, tickSeconds: rig.tickSeconds, startPose: startPose)
        var frame = startPose
        var intervals = ViolationIntervals(rig: rig)
        var ticks = 0
        // Frames around the program: at rest before it (the start pose) and after it.
        while !player.isFinished, ticks < maxTicks {
            let phase = player.phase
            switch phase {
            case .moving: spent.move += 1
            case .settling: spent.settle += 1
            case .shooting: if player.shotOpen { spent.exposure += 1 } else { spent.camera += 1 }
            default: break
            }
            let event = player.tick(into: &frame)
            ticks += 1
            let time = Double(ticks) * rig.tickSeconds
            switch event {
            case .ready(let step):
                if plan.timing == nil { shotStarted(step, time) }
                player.advance()
            case .shot(.started(let step, 1)): shotStarted(step, time)
            case .shot(.slotMissed(let step, _)): missed.insert(step)
            default: break
            }
            // Jerk is checked on planned moves and rest, not on keyframe paths (the user's curves,
            // and the input shaper's echo of them).
            monitor.observeEach(frame, checkingJerk: !player.frameHasPath) { intervals.record($0, tick: ticks, time: time) { describe(phase, motion: motion) } }
            intervals.endTick(ticks)
        }
        let finished = player.isFinished
        // One more frame at rest: a path that ends moving cannot stop in zero time.
        let time = Double(ticks + 1) * rig.tickSeconds
        monitor.observeEach(frame, checkingJerk: true) { intervals.record($0, tick: ticks + 1, time: time) { "end" } }
        intervals.endTick(ticks + 1)
        intervals.closeAll()
        return FeasibilityReport(
            problems: intervals.stored.sorted {
                ($0.timeSeconds, ViolationIntervals.key($0.violation)) < ($1.timeSeconds, ViolationIntervals.key($1.violation))
            },
            problemCount: intervals.count, margins: monitor.margins, ticks: ticks,
            durationSeconds: Double(ticks) * rig.tickSeconds,
            unchecked: finished ? nil : .budgetReached(maxTicks: maxTicks, loopRateHz: rig.loopRateHz),
            intervalMisses: misses, shotStartSeconds: starts)
    }

    static func describe(_ phase: Player.Phase, motion: Motion) -> String {
        let steps: [Step]
        if case .stepped(let s) = motion { steps = s } else { steps = [] }
        switch phase {
        case .leadIn: return "lead-in to the first key"
        case .waitingToStart: return "at the first key"
        case .path: return "keyframe path"
        case .moving(let step): return steps.indices.contains(step) ? "move to \(elided(steps[step].label))" : "move"
        case .settling(let step), .shooting(let step), .waiting(let step): return steps.indices.contains(step) ? "at \(elided(steps[step].label))" : "start"
        case .movingHome: return "move to home"
        case .settlingHome, .atHome: return "at home"
        case .braking: return "braking"
        case .parking: return "park"
        case .finished: return "end"
        }
    }
}

/// Merges consecutive violating frames of one axis and limit into one problem with its
/// time span and worst value.
struct ViolationIntervals {
    private struct Open {
        var problem: FeasibilityProblem
        var lastTick: Int
    }

    let rig: Rig
    private var open: [Int: Open] = [:]
    private(set) var stored: [FeasibilityProblem] = []
    private(set) var count = 0

    init(rig: Rig) { self.rig = rig }

    /// Axis and limit as one number, in the order the monitor checks them.
    static func key(_ v: LimitViolation) -> Int {
        let limit: Int
        switch v.limit {
        case .softMin: limit = 0
        case .softMax: limit = 1
        case .velocity: limit = 2
        case .acceleration: limit = 3
        case .jerk: limit = 4
        }
        return v.axis * 5 + limit
    }

    /// How far past its limit a violation is (bigger is worse).
    private static func excess(_ v: LimitViolation) -> Double {
        v.limit == .softMin ? v.allowed - v.value : v.value - v.allowed
    }

    mutating func record(_ v: LimitViolation, tick: Int, time: Double, during: () -> String) {
        let key = Self.key(v)
        if var current = open[key], current.lastTick == tick - 1 {
            current.lastTick = tick
            current.problem.endSeconds = time
            current.problem.frames += 1
            if Self.excess(v) > Self.excess(current.problem.violation) { current.problem.violation = v }
            open[key] = current
            return
        }
        if let current = open[key] { close(current) }
        let axis = rig.axes[v.axis]
        open[key] = Open(
            problem: FeasibilityProblem(
                violation: v, axisName: axis.name, unit: axis.unit, timeSeconds: time,
                endSeconds: time, frames: 1, during: during()), lastTick: tick)
    }

    /// Closes the intervals that had no violating frame at `tick`.
    mutating func endTick(_ tick: Int) {
        guard !open.isEmpty else { return }
        for (key, current) in open where current.lastTick < tick {
            close(current)
            open[key] = nil
        }
    }

    mutating func closeAll() {
        for current in open.values { close(current) }
        open = [:]
    }

    private mutating func close(_ current: Open) {
        count += 1
        if stored.count < FeasibilityChecker.maxStoredProblems { stored.append(current.problem) }
    }
}
