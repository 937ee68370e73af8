/// Something the player reports as it passes it (for step sync, the live view, logs).
public enum PlayerEvent: Sendable, Equatable {
    /// A move towards step `index` (0-based) began.
    case moveStarted(step: Int)
    /// The rig is at step `index` and has settled: the shot can be taken.
    case ready(step: Int)
    /// The program's motion is over (normally or after a stop); parking may follow.
    case programEnded(stopped: Bool)
    /// Everything is done, park included: outputs may go to their safe state.
    case finished
}

/// The loop's step function: turns a program into one pose per tick. Deterministic and
/// free of I/O and clocks: tick `n` is at `n / loopRateHz` seconds.
///
/// Continuous programs: a lead-in move from the start pose to the path's first pose,
/// then the path sampled every tick. Stepped programs: a move to each step, the settle
/// time, then wait for `advance()`. `stop()` brakes every axis at its acceleration
/// limit; then the rig parks (axes with a park position) and finishes.
public struct Player: Sendable {
    public enum Phase: Sendable, Equatable {
        case leadIn
        case path
        case moving(step: Int)
        case settling(step: Int)
        case waiting(step: Int)
        case braking
        case parking
        case finished
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

    /// - Parameter moveToFirstStep: stepped programs move to step 1 at once (the
    ///   default); false waits where the rig stands until the first `advance()`.
    public init(rig: Rig, motion: Motion, startPose: [Double], moveToFirstStep: Bool = true) {
        self.rig = rig
        self.motion = motion
        self.dt = rig.tickSeconds
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
            if steps.isEmpty {
                phase = .finished
            } else if moveToFirstStep {
                beginMove(to: 0, steps: steps)
            } else {
                phase = .waiting(step: -1)
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

    /// Brakes to a stop within the limits, then parks and finishes.
    public mutating func stop() {
        guard !stopped else { return }
        stopped = true
        switch phase {
        case .parking, .finished, .braking: return
        default: phase = .braking
        }
    }

    public var isFinished: Bool { phase == .finished }

    /// Computes the next tick's pose into `out` and returns what happened at it, if anything.
    @inline(__always)
    public mutating func tick(into out: inout [Double]) -> PlayerEvent? {
        var event: PlayerEvent?
        for i in positions.indices { previous[i] = positions[i] }
        switch phase {
        case .leadIn:
            if advanceMove() {
                phase = .path
                phaseTicks = 0
            }
        case .path:
            guard case .continuous(let tracks, let duration) = motion else { break }
            phaseTicks += 1
            let t = Double(phaseTicks) * dt
            for i in rig.axes.indices {
                if let track = tracks[i] { positions[i] = track.value(at: t, cursor: &cursors[i]) }
            }
            if t >= duration {
                event = .programEnded(stopped: false)
                beginPark()
            }
        case .moving(let step):
            if advanceMove() {
                guard case .stepped(let steps) = motion else { break }
                phaseTicks = tickCount(seconds: steps[step].settleSeconds, tickSeconds: dt)
                phase = .settling(step: step)
                if phaseTicks == 0 { phase = .waiting(step: step); event = .ready(step: step) }
            }
        case .settling(let step):
            phaseTicks -= 1
            if phaseTicks <= 0 {
                phase = .waiting(step: step)
                event = .ready(step: step)
            }
        case .waiting(let step):
            guard pendingAdvance, case .stepped(let steps) = motion else { break }
            pendingAdvance = false
            if step + 1 < steps.count {
                beginMove(to: step + 1, steps: steps)
                event = .moveStarted(step: step + 1)
                _ = advanceMove()
            } else {
                event = .programEnded(stopped: false)
                beginPark()
            }
        case .braking:
            var moving = false
            for i in rig.axes.indices {
                let v = velocities[i]
                let dv = rig.axes[i].maxAcceleration * dt
                let next = abs(v) <= dv ? 0 : v - (v > 0 ? dv : -dv)
                positions[i] = min(max(positions[i] + next * dt, rig.axes[i].softMin), rig.axes[i].softMax)
                if next != 0 { moving = true }
            }
            if !moving {
                event = .programEnded(stopped: true)
                beginPark()
            }
        case .parking:
            if advanceMove() {
                phase = .finished
                event = event ?? .finished
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
        for i in rig.axes.indices { target[i] = steps[step].pose[i] }
        move.plan(from: positions, to: target, axes: rig.axes, tickSeconds: dt)
        moveTick = 0
        phase = .moving(step: step)
    }

    private mutating func beginPark() {
        for i in rig.axes.indices { target[i] = rig.axes[i].park ?? positions[i] }
        move.plan(from: positions, to: target, axes: rig.axes, tickSeconds: dt)
        moveTick = 0
        phase = .parking
    }
}
