/// A limit broken somewhere in a program, located for the user.
public struct FeasibilityProblem: Sendable, Equatable, CustomStringConvertible {
    public var violation: LimitViolation
    public var axisName: String
    public var unit: String
    public var timeSeconds: Double
    /// "keyframe path", "lead-in", "move to shot 3 (row 1, column 3)", "park".
    public var during: String

    public var description: String {
        let v = violation
        let what: String
        switch v.limit {
        case .softMin, .softMax:
            what = "position \(rounded(v.value))\(unit) is beyond the \(v.limit.rawValue) \(rounded(v.allowed))\(unit)"
        case .velocity:
            what = "velocity \(rounded(v.value))\(unit)/s exceeds maxVelocity \(rounded(v.allowed))\(unit)/s"
        case .acceleration:
            what = "acceleration \(rounded(v.value))\(unit)/s² exceeds maxAcceleration \(rounded(v.allowed))\(unit)/s²"
        case .jerk:
            what = "jerk \(rounded(v.value))\(unit)/s³ exceeds maxJerk \(rounded(v.allowed))\(unit)/s³"
        }
        return "axis \"\(axisName)\" at t=\(rounded(timeSeconds))s (\(during)): \(what)"
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

    public var description: String {
        let name = label == "step \(step + 1)" ? label : "step \(step + 1) (\(label))"
        return "\(name) needs \(rounded(neededSeconds)) s from the previous shot's start (move, settle and shot); the interval is \(rounded(intervalSeconds)) s"
    }
}

/// What `rig check` found.
public struct FeasibilityReport: Sendable {
    public var problems: [FeasibilityProblem]
    public var margins: [AxisMargins]
    public var ticks: Int
    public var durationSeconds: Double
    /// Steps that cannot keep `interval:S` (empty without an interval).
    public var intervalMisses: [IntervalMiss] = []
    /// When each step's first shot starts (0-based step → program seconds); with no
    /// camera, when it is ready.
    public var shotStartSeconds: [Int: Double] = [:]
    /// Limits are kept. An interval a step cannot keep is a separate refusal
    /// (`intervalMisses`): the motion itself is safe.
    public var feasible: Bool { problems.isEmpty }
}

/// Plays a whole program through the real step function, advancing every step at once,
/// and checks every frame against every limit.
public enum FeasibilityChecker {
    /// - Parameters:
    ///   - shooting: the run's camera timing and interval; shots are timed by the plan
    ///     (`selfTimed` is forced on), so the check sees the moves, holds and slots the
    ///     run will have.
    ///   - firstStep: where a resumed run starts (0-based).
    ///   - maxTicks: a bound so a runaway program cannot hang the check.
    public static func check(rig: Rig, motion: Motion, startPose: [Double], shooting: ShootingPlan = .none,
                             firstStep: Int = 0, maxTicks: Int = 500_000_000) -> FeasibilityReport {
        var plan = shooting
        plan.selfTimed = true
        var player = Player(rig: rig, motion: motion, startPose: startPose, firstStep: firstStep, shooting: plan)
        var starts: [Int: Double] = [:]
        var misses: [IntervalMiss] = []
        var lastStart: Double?
        var missed: Set<Int> = []
        func shotStarted(_ step: Int, _ time: Double) {
            if missed.contains(step), let lastStart, let interval = plan.intervalSeconds, case .stepped(let steps) = motion {
                misses.append(IntervalMiss(step: step, label: steps[step].label, neededSeconds: time - lastStart, intervalSeconds: interval))
            }
            starts[step] = starts[step] ?? time
            lastStart = time
        }
        var monitor = LimitMonitor(axes: rig.axes, tickSeconds: rig.tickSeconds, startPose: startPose)
        var frame = startPose
        var problems: [FeasibilityProblem] = []
        var reported = Set<String>()
        var ticks = 0
        // Frames around the program: at rest before it (the start pose) and after it.
        while !player.isFinished, ticks < maxTicks {
            let phase = player.phase
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
            // Jerk is checked on planned moves and rest, not on keyframe paths (the user's curves).
            if let v = monitor.observe(frame, checkingJerk: phase != .path) {
                let key = "\(v.axis)/\(v.limit.rawValue)"
                if reported.insert(key).inserted {
                    problems.append(FeasibilityProblem(violation: v, axisName: rig.axes[v.axis].name, unit: rig.axes[v.axis].unit,
                                                       timeSeconds: Double(ticks) * rig.tickSeconds,
                                                       during: describe(phase, motion: motion)))
                }
            }
        }
        // One more frame at rest: a path that ends moving cannot stop in zero time.
        if let v = monitor.observe(frame, checkingJerk: true) {
            problems.append(FeasibilityProblem(violation: v, axisName: rig.axes[v.axis].name, unit: rig.axes[v.axis].unit,
                                               timeSeconds: Double(ticks) * rig.tickSeconds, during: "end"))
        }
        return FeasibilityReport(problems: problems, margins: monitor.margins, ticks: ticks,
                                 durationSeconds: Double(ticks) * rig.tickSeconds, intervalMisses: misses, shotStartSeconds: starts)
    }

    static func describe(_ phase: Player.Phase, motion: Motion) -> String {
        let steps: [Step]
        if case .stepped(let s) = motion { steps = s } else { steps = [] }
        switch phase {
        case .leadIn: return "lead-in to the first key"
        case .path: return "keyframe path"
        case .moving(let step): return "move to \(steps[step].label)"
        case .settling(let step), .shooting(let step), .waiting(let step): return steps.indices.contains(step) ? "at \(steps[step].label)" : "start"
        case .braking: return "braking"
        case .parking: return "park"
        case .finished: return "end"
        }
    }
}

/// Rounds for messages: at most three decimals, no trailing zeros.
public func rounded(_ value: Double) -> String {
    format((value * 1000).rounded() / 1000)
}
