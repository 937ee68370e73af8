/// Something the player reports as it passes it (for step sync, the live view, logs).
public enum PlayerEvent: Sendable, Equatable {
    /// A move towards step `index` (0-based) began.
    case moveStarted(step: Int)
    /// The rig is at step `index` and has settled: the shot can be taken.
    case ready(step: Int)
    /// A move to the rig's home pose began (`goHome()`), from step `after` (-1: before the first).
    case homeMoveStarted(after: Int)
    /// The rig is at its home pose and has settled (`goHome()`); the next `advance()` goes
    /// on with step `after + 1`.
    case readyAtHome(after: Int)
    /// The program's motion is over (normally or after a stop); parking may follow.
    case programEnded(stopped: Bool)
    /// Everything is done, park included: outputs may go to their safe state.
    case finished
    /// A shot began, ended, or missed its interval slot (see `ShotEvent`).
    case shot(ShotEvent)
}

/// What the player reports about shots. Steps are 0-based like the other events;
/// brackets 1-based.
public enum ShotEvent: Sendable, Equatable {
    /// The shutter sequence of this shot starts now: the camera must fire. Nothing moves
    /// until the matching `ended`.
    case started(step: Int, bracket: Int)
    /// The shot is over (the camera reported it, or its planned time passed).
    case ended(step: Int, bracket: Int)
    /// `interval:S` could not be kept: the shot of `step` should have started at
    /// `slotSeconds` (program time) and has not. It starts as soon as it can.
    case slotMissed(step: Int, slotSeconds: Double)
}

/// The loop's step function: turns a program into one pose per tick. Deterministic and
/// free of I/O and clocks: tick `n` is at `n / loopRateHz` seconds.
///
/// Continuous programs: a lead-in move from the start pose to the path's first pose,
/// then the path sampled every tick. Stepped programs: a move to each step (approached
/// from below on axes with `backlashDeg`), the settle time, the shots when the run has a
/// camera (holding still from each shot's start to its end), then wait for `advance()`
/// (`.ready`). With an interval, moves start so that each shot starts the interval after
/// the previous one. `stop()` brakes every axis at its acceleration limit; then the rig
/// parks (axes with a park position) and finishes. `goHome()` is an excursion between
/// steps: to the rig's home pose, settle, no shot, then on with the step after the one it
/// left.
public struct Player: Sendable {
    public enum Phase: Sendable, Equatable {
        case leadIn
        case path
        case moving(step: Int)
        case settling(step: Int)
        /// Holding still at a settled step: before a shot (its slot, the after-shot wait of
        /// the previous one) or during it.
        case shooting(step: Int)
        case waiting(step: Int)
        /// An excursion to the home pose (`goHome()`) from step `after`, then settling and
        /// waiting there; `advance()` goes on with step `after + 1`.
        case movingHome(after: Int)
        case settlingHome(after: Int)
        case atHome(after: Int)
        case braking
        case parking
        case finished

        /// Waiting for `advance()`: at a step (or before the first), or at home.
        public var isWaiting: Bool {
            switch self {
            case .waiting, .atHome: true
            default: false
            }
        }

        /// Stopping or stopped: braking, parking, finished.
        public var isStopping: Bool {
            switch self {
            case .braking, .parking, .finished: true
            default: false
            }
        }
    }

    public let rig: Rig
    public let motion: Motion
    public private(set) var phase: Phase
    /// Ticks since the program started.
    public private(set) var tickIndex = 0
    /// The pose emitted last.
    public private(set) var positions: [Double]
    /// Velocity of the last emitted tick, per axis.
    public private(set) var velocities: [Double]
    public private(set) var stopped = false

    private let dt: Double
    private var move = PoseMove()
    private var moveTick = 0
    private var phaseTicks = 0
    private var cursors: [Int]
    private var pendingAdvance = false
    private var target: [Double]
    private var previous: [Double]

    // Shooting (see `ShootingPlan`); ticks count frames, `now` is the frame being made.
    public let shooting: ShootingPlan
    private let shotTicks: Int
    private let afterShotTicks: Int
    private let intervalTicks: Int?
    /// A ramped interval, in ticks after each step's shot (`ShootingPlan.stepIntervals`).
    private let stepIntervalTicks: [Int]?
    private let lashed: Bool
    private var bracket = 0
    private var shotOpen = false
    private var shotElapsedTicks = 0
    private var shotDoneRequested = false
    private var earliestShotTick = 0
    private var lastShotStartTick: Int?
    private var slotTick: Int?
    private var slotMissReported = false
    private var pendingRedo = false
    private var pendingJump: Int?
    private var pendingHome = false
    private var atStep: Int?
    /// The last shot ended on the previous tick: `.ready` is reported now (one event per tick).
    private var readyPending = false
    private var pathShots = 0
    private var plannedMoveStartTick: Int?
    // Backlash: the move to `waypoint` comes first, then the final approach to `target`.
    private var approachPending = false
    private var waypoint: [Double]
    private var scratchMove = PoseMove()

    /// - Parameters:
    ///   - moveToFirstStep: stepped programs move to their first step at once (the
    ///     default); false waits where the rig stands until the first `advance()`.
    ///   - firstStep: the step to start at, 0-based (`--resume`, `--from-step`); clamped
    ///     to the program's steps.
    ///   - shooting: the camera's shot timing, the interval, and who ends a shot.
    public init(
        rig: Rig, motion: Motion, startPose: [Double], moveToFirstStep: Bool = true,
        firstStep: Int = 0, shooting: ShootingPlan = .none
    ) {
        self.rig = rig
        self.motion = motion
        self.dt = rig.tickSeconds
        self.shooting = shooting
        let dt = rig.tickSeconds
        // Durations: 0.3 s at 100 Hz is 30 ticks, not the 31 that 30.000000000000004 rounds up to.
        func ticks(_ seconds: Double) -> Int { tickCount(seconds: seconds, tickSeconds: dt, slack: -1e-9) }
        shotTicks = max(1, ticks(shooting.timing?.shotSeconds ?? 0))
        afterShotTicks = ticks(shooting.timing?.afterShotSeconds ?? 0)
        intervalTicks = shooting.intervalSeconds.map { max(1, ticks($0)) }
        stepIntervalTicks = shooting.intervalSeconds == nil ? nil : shooting.stepIntervals?.map { max(1, ticks($0)) }
        lashed = rig.axes.contains { $0.backlashDeg > 0 }
        waypoint = startPose.map { $0 }
        // Storage of their own (`map`, not a shared copy of `startPose`): arrays share
        // storage until written, and the first tick must not copy on write.
        positions = startPose.map { $0 }
        velocities = [Double](repeating: 0, count: rig.axes.count)
        cursors = [Int](repeating: 0, count: rig.axes.count)
        target = startPose.map { $0 }
        previous = startPose.map { $0 }
        phase = .leadIn
        switch motion {
        case .continuous(let tracks, _):
            for i in rig.axes.indices { target[i] = tracks[i]?.keys[0].value ?? rig.axes[i].home }
            move.plan(from: startPose, to: target, axes: rig.axes, tickSeconds: dt)
            phase = .leadIn
        case .stepped(let steps):
            let first = min(max(firstStep, 0), max(steps.count - 1, 0))
            if steps.isEmpty {
                phase = .finished
            } else if moveToFirstStep {
                beginMove(to: first, steps: steps)
            } else {
                phase = .waiting(step: first - 1)
            }
        }
    }

    public var stepCount: Int { if case .stepped(let s) = motion { s.count } else { 0 } }

    /// Seconds of program time since the start.
    public var elapsedSeconds: Double { Double(tickIndex) * dt }

    /// The trigger: go on from the step the rig is waiting at (or, if it is still moving
    /// or settling, as soon as it is ready).
    public mutating func advance() {
        pendingAdvance = true
    }

    /// The camera finished the shot it was asked for (`ShotEvent.started`). Ignored when
    /// shots are self-timed or none is under way.
    public mutating func shotDone() {
        if shotOpen { shotDoneRequested = true }
    }

    /// Shoot the current step again (keyboard `r`), once it is waiting for the trigger.
    public mutating func redo() {
        pendingRedo = true
    }

    /// Move to step `step` (0-based) and shoot it (keyboard `b`, `g`; Cascable
    /// `rig: step N`), once the current step is done. Out-of-range steps are ignored.
    public mutating func goTo(step: Int) {
        guard step >= 0, step < stepCount else { return }
        pendingJump = step
        pendingHome = false
    }

    /// Move to the rig's home pose (every axis's `home`) with a planned move, settle, and
    /// report `.readyAtHome` (Cascable `rig: home`), once the current step is done; no shot
    /// is taken there. The next `advance()` goes on with the step after the one the rig
    /// left (the interval, if any, counts again from that step's shot). Stepped programs only.
    public mutating func goHome() {
        guard stepCount > 0 else { return }
        pendingHome = true
        pendingJump = nil
    }

    /// Brakes to a stop within the limits, then parks and finishes.
    public mutating func stop() {
        guard !stopped else { return }
        stopped = true
        shotOpen = false
        plannedMoveStartTick = nil
        readyPending = false
        switch phase {
        case .parking, .finished, .braking: return
        default: phase = .braking
        }
    }

    /// The rig stood still through a stall: stop from rest where it is (braking then
    /// ends at once), then park with a planned move. Always ends the program.
    public mutating func stallStop() -> Bool {
        for i in velocities.indices { velocities[i] = 0 }
        switch phase {
        case .finished: break
        case .parking: beginPark()  // re-planned from rest
        default: stop()
        }
        return true
    }

    public var isFinished: Bool { phase == .finished }

    /// Computes the next tick's pose into `out` and returns what happened at it, if anything.
    @inline(__always)
    public mutating func tick(into out: inout [Double]) -> PlayerEvent? {
        for i in positions.indices { previous[i] = positions[i] }
        var event: PlayerEvent?
        switch phase {
        case .leadIn:
            if advanceMove() {
                phase = .path
                phaseTicks = 0
            }
        case .path: event = pathTick()
        case .moving(let step): event = moveTick(to: step)
        case .settling(let step):
            phaseTicks -= 1
            if phaseTicks <= 0 { event = beginShooting(step) }
        case .shooting(let step): event = shootingTick(step)
        case .waiting(let step): event = waitTick(at: step)
        case .movingHome(let after): event = homeMoveTick(after: after)
        case .settlingHome(let after):
            phaseTicks -= 1
            if phaseTicks <= 0 {
                phase = .atHome(after: after)
                event = .readyAtHome(after: after)
            }
        case .atHome(let after): event = atHomeTick(after: after)
        case .braking: event = brakeTick()
        case .parking:
            if advanceMove() {
                phase = .finished
                event = .finished
            }
        case .finished:
            break
        }
        for i in rig.axes.indices {
            velocities[i] = (positions[i] - previous[i]) / dt
            out[i] = positions[i]
        }
        tickIndex += 1
        return event
    }

    // MARK: - One tick per phase

    /// A continuous program: the tracks at this tick's time, a shot on the move every
    /// `--interval`, and the park at the end.
    private mutating func pathTick() -> PlayerEvent? {
        guard case .continuous(let tracks, let duration) = motion else { return nil }
        var event: PlayerEvent?
        phaseTicks += 1
        let t = Double(phaseTicks) * dt
        for i in rig.axes.indices {
            if let track = tracks[i] { positions[i] = track.value(at: t, cursor: &cursors[i]) }
        }
        if let intervalTicks, shooting.timing != nil, (phaseTicks - 1) % intervalTicks == 0 {
            // A continuous program shoots on the move (`--interval`): no hold, the
            // path cannot stop within the limits; the camera needs short exposures.
            event = .shot(.started(step: pathShots, bracket: 1))
            pathShots += 1
        }
        if t >= duration {
            event = .programEnded(stopped: false)
            beginPark()
        }
        return event
    }

    /// On the way to a step: at the end of the move (and of an overshoot's final
    /// approach), its settle, or its shot at once when it has none.
    private mutating func moveTick(to step: Int) -> PlayerEvent? {
        guard advanceMove(), case .stepped(let steps) = motion else { return nil }
        if approachPending {
            // The overshoot is done: the final approach, from below.
            approachPending = false
            move.plan(from: positions, to: target, axes: rig.axes, tickSeconds: dt)
            moveTick = 0
            return nil
        }
        phaseTicks = settleTicks(steps[step])
        phase = .settling(step: step)
        return phaseTicks == 0 ? beginShooting(step) : nil
    }

    /// Waiting at a step: ready reported once, then whatever was asked (home, a jump, a
    /// redo, next), next paced so an interval's shots start on their slots.
    private mutating func waitTick(at step: Int) -> PlayerEvent? {
        guard case .stepped(let steps) = motion else { return nil }
        if readyPending {
            readyPending = false
            return .ready(step: step)
        }
        if pendingHome { return beginHomeMove(after: step) }
        if let jump = pendingJump {
            pendingJump = nil
            pendingAdvance = false
            pendingRedo = false
            slotTick = nil
            return startMove(to: jump, steps: steps)
        }
        if pendingRedo {
            pendingRedo = false
            if atStep == step {
                pendingAdvance = false
                slotTick = nil
                return beginShooting(step)
            }
        }
        guard pendingAdvance else { return nil }
        guard step + 1 < steps.count else {
            pendingAdvance = false
            beginPark()
            return .programEnded(stopped: false)
        }
        if let interval = intervalTicks(after: step), let last = lastShotStartTick {
            // Start the move late enough that the next shot starts on its slot.
            let slot = last + interval
            // Planned once per wait: the rig stands still, so the move is the same each tick.
            let start = plannedMoveStartTick ?? (slot - ticksToReach(step + 1, steps: steps))
            plannedMoveStartTick = start
            if tickIndex + 1 < start { return nil }
            plannedMoveStartTick = nil
            slotTick = slot
            slotMissReported = false
        }
        pendingAdvance = false
        return startMove(to: step + 1, steps: steps)
    }

    /// On the way home between steps (`rig: home`): its settle, then at home.
    private mutating func homeMoveTick(after: Int) -> PlayerEvent? {
        guard advanceMove(), case .stepped(let steps) = motion else { return nil }
        if approachPending {
            approachPending = false
            move.plan(from: positions, to: target, axes: rig.axes, tickSeconds: dt)
            moveTick = 0
            return nil
        }
        // The settle of the step it left: the program's, unless that step has its own.
        phaseTicks = settleTicks(steps[min(max(after, 0), steps.count - 1)])
        phase = .settlingHome(after: after)
        guard phaseTicks == 0 else { return nil }
        phase = .atHome(after: after)
        return .readyAtHome(after: after)
    }

    /// At home between steps: a jump, or next (the step after the one it left).
    private mutating func atHomeTick(after: Int) -> PlayerEvent? {
        guard case .stepped(let steps) = motion else { return nil }
        if pendingHome {
            // Asked again while there: settled already.
            pendingHome = false
            pendingAdvance = false
            return .readyAtHome(after: after)
        }
        if let jump = pendingJump {
            pendingJump = nil
            pendingAdvance = false
            return startMove(to: jump, steps: steps)
        }
        pendingRedo = false
        guard pendingAdvance else { return nil }
        pendingAdvance = false
        guard after + 1 < steps.count else {
            beginPark()
            return .programEnded(stopped: false)
        }
        return startMove(to: after + 1, steps: steps)
    }

    /// A stop: every axis decelerates at its limit, then the park.
    private mutating func brakeTick() -> PlayerEvent? {
        var moving = false
        for i in rig.axes.indices {
            let v = velocities[i]
            let dv = rig.axes[i].maxAcceleration * dt
            let next = abs(v) <= dv ? 0 : v - (v > 0 ? dv : -dv)
            positions[i] = min(max(positions[i] + next * dt, rig.axes[i].softMin), rig.axes[i].softMax)
            if next != 0 { moving = true }
        }
        guard !moving else { return nil }
        beginPark()
        return .programEnded(stopped: true)
    }

    /// A move to `step` begins, and its first frame is taken this tick.
    private mutating func startMove(to step: Int, steps: [Step]) -> PlayerEvent {
        beginMove(to: step, steps: steps)
        _ = advanceMove()
        return .moveStarted(step: step)
    }

    private func settleTicks(_ step: Step) -> Int {
        tickCount(seconds: step.settleSeconds, tickSeconds: dt)
    }

    /// The ticks from `step`'s shot to the next one's, when the shots are paced.
    private func intervalTicks(after step: Int) -> Int? {
        if let stepIntervalTicks, stepIntervalTicks.indices.contains(step) { return stepIntervalTicks[step] }
        return intervalTicks
    }

    /// Settled at `step`: hold for its shots (none without a camera, but an interval's
    /// slot still holds the `.ready`), starting the first at once if it may.
    private mutating func beginShooting(_ step: Int) -> PlayerEvent? {
        plannedMoveStartTick = nil
        phase = .shooting(step: step)
        atStep = step
        bracket = 0
        shotOpen = false
        return shootingTick(step)
    }

    /// One tick held at `step`: start the next shot when its slot and the after-shot
    /// wait allow, end it when it is done, then wait for the trigger.
    private mutating func shootingTick(_ step: Int) -> PlayerEvent? {
        let now = tickIndex + 1
        if !shotOpen {
            if bracket == 0, let slot = slotTick, now > slot, !slotMissReported {
                slotMissReported = true
                return .shot(.slotMissed(step: step, slotSeconds: Double(slot) * dt))
            }
            let slot = bracket == 0 ? (slotTick ?? 0) : 0
            guard now >= max(earliestShotTick, slot) else { return nil }
            if bracket == 0 {
                lastShotStartTick = now
                slotTick = nil
            }
            guard shooting.timing != nil else {
                // No camera: the settled moment is the "shot" an interval counts from.
                phase = .waiting(step: step)
                return .ready(step: step)
            }
            shotOpen = true
            shotElapsedTicks = 0
            shotDoneRequested = false
            return .shot(.started(step: step, bracket: bracket + 1))
        }
        shotElapsedTicks += 1
        let done = shooting.selfTimed ? shotElapsedTicks >= shotTicks : shotDoneRequested
        guard done else { return nil }
        shotOpen = false
        earliestShotTick = now + afterShotTicks
        let ended = PlayerEvent.shot(.ended(step: step, bracket: bracket + 1))
        bracket += 1
        if bracket >= (shooting.timing?.shotsPerStep ?? 1) {
            phase = .waiting(step: step)
            readyPending = true
        }
        return ended
    }

    /// Ticks from here to settled at `step`: the move (with its backlash overshoot) and
    /// the settle time. Plans into scratch storage: no allocation once sized.
    private mutating func ticksToReach(_ step: Int, steps: [Step]) -> Int {
        for i in rig.axes.indices { target[i] = steps[step].pose[i] }
        var total = settleTicks(steps[step])
        if lashed, approachWaypoint() {
            scratchMove.plan(from: positions, to: waypoint, axes: rig.axes, tickSeconds: dt)
            total += scratchMove.ticks
            scratchMove.plan(from: waypoint, to: target, axes: rig.axes, tickSeconds: dt)
        } else {
            scratchMove.plan(from: positions, to: target, axes: rig.axes, tickSeconds: dt)
        }
        return total + scratchMove.ticks
    }

    /// Fills `waypoint` with where to overshoot to so that every axis with backlash
    /// makes its final approach to `target` upwards, over at least its backlash (as far
    /// as the soft limits allow). True if any axis needs it.
    private mutating func approachWaypoint() -> Bool {
        var needed = false
        for i in rig.axes.indices {
            let axis = rig.axes[i]
            waypoint[i] = target[i]
            guard axis.backlashDeg > 0, positions[i] > target[i] - axis.backlashDeg else { continue }
            let below = max(target[i] - axis.backlashDeg, axis.softMin)
            if below < target[i], below < positions[i] {
                waypoint[i] = below
                needed = true
            }
        }
        return needed
    }

    /// Samples the next tick of the current move; true once it has arrived.
    @inline(__always)
    private mutating func advanceMove() -> Bool {
        if moveTick < move.ticks {
            moveTick += 1
            move.sample(tick: moveTick, tickSeconds: dt, into: &positions)
        }
        return moveTick >= move.ticks
    }

    private mutating func beginMove(to step: Int, steps: [Step]) {
        plannedMoveStartTick = nil
        for i in rig.axes.indices { target[i] = steps[step].pose[i] }
        approachPending = lashed && approachWaypoint()
        move.plan(from: positions, to: approachPending ? waypoint : target, axes: rig.axes, tickSeconds: dt)
        moveTick = 0
        atStep = nil
        phase = .moving(step: step)
    }

    /// Leaves step `after` for the home pose. The excursion breaks the interval's rhythm:
    /// the next step shoots as soon as it has settled, and the interval counts from there.
    private mutating func beginHomeMove(after: Int) -> PlayerEvent {
        pendingHome = false
        pendingAdvance = false
        pendingRedo = false
        plannedMoveStartTick = nil
        slotTick = nil
        lastShotStartTick = nil
        for i in rig.axes.indices { target[i] = rig.axes[i].home }
        approachPending = lashed && approachWaypoint()
        move.plan(from: positions, to: approachPending ? waypoint : target, axes: rig.axes, tickSeconds: dt)
        moveTick = 0
        atStep = nil
        phase = .movingHome(after: after)
        _ = advanceMove()
        return .homeMoveStarted(after: after)
    }

    private mutating func beginPark() {
        approachPending = false
        atStep = nil
        for i in rig.axes.indices { target[i] = rig.axes[i].park ?? positions[i] }
        move.plan(from: positions, to: target, axes: rig.axes, tickSeconds: dt)
        moveTick = 0
        phase = .parking
    }
}
