/// Something the player reports as it passes it (for step sync, the live view, logs).
public enum PlayerEvent: Sendable, Equatable {
    /// A move towards step `index` (0-based) began.
    case moveStarted(step: Int)
    /// The rig is at step `index` and has settled: the shot can be taken.
    case ready(step: Int)
    /// A measured settle at step `step` ended after `seconds` (from the move's end):
    /// measured still (`measured`), or not within the timeout, when the fixed settle
    /// applied instead. The step's shot starts on the next tick.
    case settled(step: Int, seconds: Double, measured: Bool)
    /// A move to the rig's home pose began (`goHome()`), from step `after` (-1: before the first).
    case homeMoveStarted(after: Int)
    /// The rig is at its home pose and has settled (`goHome()`); the next `advance()` goes
    /// on with step `after + 1`.
    case readyAtHome(after: Int)
    /// A keyframes program that holds before its path (`holdsBeforePath`: a group's)
    /// is at the path's first pose after its lead-in; the next `advance()` starts the path.
    case readyToStart
    /// A keyframes path rejoined part-way (`rejoin(pathSeconds:framesShot:)`): at rest at
    /// its frame of tick `pathTick` (path time `pathTick · dt`) after the lead-in; the next
    /// `advance()` goes on from there on the path, from rest.
    case readyToRejoin(pathTick: Int)
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
        /// At the path's first pose after the lead-in, until `advance()` (`holdsBeforePath`).
        case waitingToStart
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
            case .waiting, .atHome, .waitingToStart: true
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
    public internal(set) var phase: Phase
    /// Ticks since the program started.
    public internal(set) var tickIndex = 0
    /// The reference pose of the last tick: what the program asks for before the axes'
    /// input shapers (the emitted pose when no axis has one).
    public internal(set) var positions: [Double]
    /// Velocity of the last reference tick, per axis.
    public internal(set) var velocities: [Double]
    /// The pose emitted last: `positions` through the axes' input shapers.
    public internal(set) var emitted: [Double]
    /// The frame just emitted carries keyframe-path frames (the path itself, or the
    /// shaper's echo of it after the path ended): `check` does not judge it on jerk.
    public internal(set) var frameHasPath = false
    public internal(set) var stopped = false

    // The state below is the player's own; internal (not private) only because the phase
    // functions in Player+Phases.swift share it. Nothing outside the player touches it.

    let dt: Double
    var move = PoseMove()
    var moveTick = 0
    var phaseTicks = 0
    var cursors: [Int]
    var pendingAdvance = false
    var target: [Double]
    var previous: [Double]

    // Shooting (see `ShootingPlan`); ticks count frames, `now` is the frame being made.
    public let shooting: ShootingPlan
    let shotTicks: Int
    /// Per step and frame, when the plan knows each frame's exposure (`frameExposureSeconds`).
    let frameShotTicks: [[Int]]?
    let afterShotTicks: Int
    let intervalTicks: Int?
    /// A ramped interval, in ticks after each step's shot (`ShootingPlan.stepIntervals`).
    let stepIntervalTicks: [Int]?
    let lashed: Bool
    var bracket = 0
    var shotOpen = false
    var shotElapsedTicks = 0
    var shotDoneRequested = false
    var earliestShotTick = 0
    var lastShotStartTick: Int?
    var slotTick: Int?
    var slotMissReported = false
    var pendingRedo = false
    var pendingJump: Int?
    var pendingHome = false
    var atStep: Int?
    /// The last shot ended on the previous tick: `.ready` is reported now (one event per tick).
    var readyPending = false
    let holdsBeforePath: Bool
    /// A path rejoined part-way: the tick of its frame it leads in to (`rejoin`), and
    /// whether that lead-in was planned (after the first key's, if it was under way).
    var rejoinTick: Int?
    var rejoinPlanned = false
    var pathShots = 0
    /// The path's shot under way ends at this tick of the path (its shutter time up).
    var pathShotEndsAtTick: Int?
    var plannedMoveStartTick: Int?
    // Backlash: the move to `waypoint` comes first, then the final approach to `target`.
    var approachPending = false
    var waypoint: [Double]
    var scratchMove = PoseMove()
    /// A stepped sky track on the clock: the track's seconds when the program started (the
    /// run's real start minus the track's). Each step with an `aim` then points where its
    /// target is when its shot is made (a late start, a redo, a keyboard's step), mid-frame;
    /// nil: at the frame's planned time (`rig check`, `rig plot`).
    let trackSecondsAtStart: Double?

    /// Every frame goes through it (see `Axis.shaper`); a move has arrived once the shaped
    /// output has (`shaper.tailTicks` after the reference).
    var shaper: InputShaper
    /// The limiter bent a frame and the player took over the rig's real state: the rest
    /// (braking, park) is emitted unshaped, continuing from what the rig really does.
    var shaperBypassed = false
    /// Ticks the shaper still echoes the keyframe path after it ended.
    var pathEcho = 0
    /// A measured settle (`shooting.measuredSettle`): the latest verdict of the
    /// measurement, ticks since the move arrived, and whether its `.settled` was reported.
    var measuredStill = false
    var settleElapsedTicks = 0
    var settleReported = false
    var settleWasMeasured = false

    /// - Parameters:
    ///   - moveToFirstStep: stepped programs move to their first step at once (the
    ///     default); false waits where the rig stands until the first `advance()`.
    ///   - firstStep: the step to start at, 0-based (`--resume`, `--from-step`); clamped
    ///     to the program's steps.
    ///   - shooting: the camera's shot timing, the interval, and who ends a shot.
    ///   - holdsBeforePath: a keyframes program holds at its first pose after the lead-in
    ///     (`.readyToStart`) until `advance()` starts the path (a group starts it at one
    ///     time on every rig).
    public init(
        rig: Rig, motion: Motion, startPose: [Double], moveToFirstStep: Bool = true,
        firstStep: Int = 0, shooting: ShootingPlan = .none, trackSecondsAtStart: Double? = nil, holdsBeforePath: Bool = false
    ) {
        self.rig = rig
        self.holdsBeforePath = holdsBeforePath
        self.trackSecondsAtStart = trackSecondsAtStart
        self.motion = motion
        self.dt = rig.tickSeconds
        self.shooting = shooting
        let dt = rig.tickSeconds
        // Durations: 0.3 s at 100 Hz is 30 ticks, not the 31 that 30.000000000000004 rounds up to.
        func ticks(_ seconds: Double) -> Int { tickCount(seconds: seconds, tickSeconds: dt, slack: -1e-9) }
        shotTicks = max(1, ticks(shooting.timing?.shotSeconds ?? 0))
        frameShotTicks = shooting.frameExposureSeconds.map { steps in
            steps.indices.map { s in steps[s].indices.map { f in max(1, ticks(shooting.shotSeconds(step: s, bracket: f) ?? 0)) } }
        }
        afterShotTicks = ticks(shooting.timing?.afterShotSeconds ?? 0)
        intervalTicks = shooting.intervalSeconds.map { max(1, ticks($0)) }
        stepIntervalTicks = shooting.intervalSeconds == nil ? nil : shooting.stepIntervals?.map { max(1, ticks($0)) }
        lashed = rig.axes.contains { $0.backlashDeg > 0 }
        waypoint = startPose.map { $0 }
        // Storage of their own (`map`, not a shared copy of `startPose`): arrays share
        // storage until written, and the first tick must not copy on write.
        positions = startPose.map { $0 }
        emitted = startPose.map { $0 }
        shaper = InputShaper(axes: rig.axes, tickSeconds: dt, startPose: startPose)
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

    /// The limiter had to bend the last frame: the rig is at `pose`, moving at
    /// `velocities`, not where the program put it. Brakes from there (then parks), so the
    /// stop starts from what the rig really does.
    public mutating func stop(at pose: [Double], velocities actual: [Double]) {
        for i in positions.indices where i < pose.count && i < actual.count {
            positions[i] = pose[i]
            velocities[i] = actual[i]
        }
        shaperBypassed = true
        stop()
    }

    /// The rig stood still through a stall: stop from rest where it is (braking then
    /// ends at once), then park with a planned move. Always ends the program.
    public mutating func stallStop() -> Bool {
        for i in velocities.indices { velocities[i] = 0 }
        // From rest where the rig stands (the shaped pose), nothing in flight.
        for i in positions.indices { positions[i] = emitted[i] }
        shaper.reset(to: positions)
        switch phase {
        case .finished: break
        case .parking: beginPark()  // re-planned from rest
        default: stop()
        }
        return true
    }

    public var isFinished: Bool { phase == .finished }

    /// A group's keyframes path under way without this rig (it was restarted): lead in
    /// from where the rig is to its path's frame at `pathSeconds` (the tick at or before
    /// it, `k = ⌊pathSeconds / dt⌋`), at rest, within every axis's limits (a planned move,
    /// as the lead-in to the first key; after it when that one is under way), then
    /// `.readyToRejoin(pathTick: k)`; the next `advance()` goes on along the path from
    /// there, from rest (the caller ramps its timeline in). `framesShot`: the frames on
    /// the move this path shot before (numbers 1…n, `--interval`): when fewer than the
    /// frames due by `pathSeconds`, it leads in to frame n's moment instead, so frames
    /// n+1… are shot on the way, each once; nil: as many as are due by `pathSeconds`.
    /// Only for a path that holds before it starts (a group's), before it started, once;
    /// ignored otherwise (no `.readyToRejoin` comes).
    public mutating func rejoin(pathSeconds: Double, framesShot: Int? = nil) {
        guard holdsBeforePath, !stopped, rejoinTick == nil, case .continuous(_, let duration) = motion, pathSeconds.isFinite, pathSeconds >= 0
        else { return }
        switch phase {
        case .leadIn, .waitingToStart: break
        default: return
        }
        // The path's last tick before its end (the end itself is the park's).
        let last = max(0, Int((duration / dt).rounded(.up)) - 1)
        var k = min(Int((pathSeconds / dt + 1e-6).rounded(.down)), last)
        if let n = framesShot, let intervalTicks, shooting.timing != nil {
            // Frame n (1-based) is shot at tick 1 + (n − 1) · interval; before the first: 0.
            k = min(k, n <= 0 ? 0 : 1 + (n - 1) * intervalTicks)
        }
        rejoinTick = k
        if phase == .waitingToStart { beginRejoinLeadIn() }
    }

    /// The frames on the move due by the path's tick `k` (shot at ticks 1, 1 + interval, …).
    func pathFramesDue(byTick k: Int) -> Int {
        guard let intervalTicks, shooting.timing != nil, k >= 1 else { return 0 }
        return (k - 1) / intervalTicks + 1
    }

    /// The lead-in to the rejoined frame's pose, from rest where the rig is.
    mutating func beginRejoinLeadIn() {
        guard let k = rejoinTick, case .continuous(let tracks, _) = motion else { return }
        let t = Double(k) * dt
        for i in rig.axes.indices {
            if let track = tracks[i] {
                target[i] = track.value(at: t)
            } else {
                target[i] = rig.axes[i].home
            }
        }
        move.plan(from: positions, to: target, axes: rig.axes, tickSeconds: dt)
        moveTick = 0
        rejoinPlanned = true
        phase = .leadIn
    }

    /// The measurement's verdict this tick (the loop's stillness probe): the head is still.
    /// Only a measured settle (`shooting.measuredSettle`) listens.
    public mutating func measured(still: Bool) {
        measuredStill = still
    }

    /// Computes the next tick's pose into `out` and returns what happened at it, if anything.
    @inline(__always)
    public mutating func tick(into out: inout [Double]) -> PlayerEvent? {
        for i in positions.indices { previous[i] = positions[i] }
        var onPath = phase == .path
        var event: PlayerEvent?
        switch phase {
        case .leadIn:
            if advanceMove() {
                phaseTicks = 0
                if rejoinTick != nil, !rejoinPlanned {
                    // The first key's lead-in is over: on to the rejoined frame's pose.
                    beginRejoinLeadIn()
                } else if let k = rejoinTick {
                    phase = .waitingToStart
                    pendingAdvance = false
                    event = .readyToRejoin(pathTick: k)
                } else if holdsBeforePath {
                    phase = .waitingToStart
                    pendingAdvance = false
                    event = .readyToStart
                } else {
                    phase = .path
                }
            }
        case .waitingToStart:
            // Go: this very tick is the path's first.
            if pendingAdvance, let k = rejoinTick {
                // Rejoined: on the path at its frame k, at rest (no frame taken: the
                // timeline ramps in from here); the frames due by k are behind it.
                pendingAdvance = false
                phase = .path
                onPath = true
                phaseTicks = k
                pathShots = pathFramesDue(byTick: k)
            } else if pendingAdvance {
                pendingAdvance = false
                phase = .path
                onPath = true
                event = pathTick()
            }
        case .path: event = pathTick()
        case .moving(let step): event = moveTick(to: step)
        case .settling(let step):
            if shooting.measuredSettle != nil {
                event = measuredSettleTick(step)
            } else {
                phaseTicks -= 1
                if phaseTicks <= 0 { event = beginShooting(step) }
            }
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
        for i in rig.axes.indices { velocities[i] = (positions[i] - previous[i]) / dt }
        if shaperBypassed {
            for i in rig.axes.indices { emitted[i] = positions[i] }
        } else {
            shaper.shape(positions, into: &emitted)
        }
        for i in rig.axes.indices { out[i] = emitted[i] }
        if onPath {
            pathEcho = shaper.tailTicks
            frameHasPath = true
        } else {
            frameHasPath = pathEcho > 0
            if pathEcho > 0 { pathEcho -= 1 }
        }
        tickIndex += 1
        return event
    }
}
