/// The command-driven motion source (jog, `rig serve`, DFMoco). `stop()` (Ctrl-C / session end)
/// brakes, parks (axes with a park position) and finishes, like Player.
///
/// Runs on the loop thread. Other threads post commands to the loop's `SourceMailbox`,
/// which hands them to it at the start of every tick (`receive(_:)`); the owner of the
/// source on the loop thread (the program host) may also `apply(_:)` commands directly. Every frame it emits passes its own `MotionLimiter`:
/// no frame leaves the soft limits or exceeds maxVelocity or maxAcceleration, whatever the
/// commands. No allocation per tick once running (a `.goTo` carries its own array).
public struct CommandSource: MotionSource {
    /// What the source is doing.
    public enum Mode: Sendable, Equatable {
        /// At rest, waiting for a command.
        case idle
        /// Following `.jog` velocities.
        case jogging
        /// Braking to rest (after `.halt` or the jog deadman), then idle.
        case braking
        /// Braking to rest before a `.goTo` move.
        case settling
        /// A `.goTo` move.
        case moving
        /// Playing `.follow` tracks.
        case following
        /// `stop()`: braking to rest before parking.
        case stopping
        case parking
        case finished
    }

    public let rig: Rig
    public let jogTimeoutSeconds: Double
    public private(set) var mode = Mode.idle
    /// Ticks since the source started.
    public private(set) var tickIndex = 0
    /// Per axis: the velocity cap as a fraction of maxVelocity (`.setSpeedScale`), 1 by default.
    public private(set) var speedScales: [Double]
    /// Axes whose target the last `.goTo` had to clamp to a soft limit.
    public private(set) var clampedAxes: [Int]
    /// Commands ignored because they were malformed (see `MotionCommand`).
    public private(set) var rejectedCommands = 0
    /// How often the jog deadman stopped the rig (no `.jog` within `jogTimeoutSeconds`).
    public private(set) var deadmanStops = 0
    /// The target of the current or last `.goTo` (after clamping), or the park pose.
    public private(set) var moveTarget: [Double]

    private let jogTimeoutTicks: Int
    private var controller: JogController
    private var limiter: MotionLimiter
    private var frame: [Double]
    private var zeros: [Double]
    private var jogTargets: [Double]
    private var lastJogTick = 0
    private var scaledAxes: [Axis]
    /// The rig's axes for its moves, which no shaper smooths (`Axis.forUnshapedMoves`).
    private let unshapedAxes: [Axis]
    private var move = PoseMove()
    private var moveTick = 0
    private var stopRequested = false
    /// `.follow`: the tracks (empty when none), their cursors and the tick count into them.
    private var followTracks: [AxisTrack?] = []
    private var followCursors: [Int] = []
    private var followTick = 0
    private var followEndSeconds = 0.0

    /// - Parameters:
    ///   - startPose: where the rig is (one value per axis); the first frame starts from it at rest.
    ///   - jogTimeoutSeconds: the jog deadman; rounded up to whole loop ticks, at least one.
    public init(rig: Rig, startPose: [Double], jogTimeoutSeconds: Double = 0.25) {
        self.rig = rig
        self.jogTimeoutSeconds = jogTimeoutSeconds
        let dt = rig.tickSeconds
        // One tick is the floor (a NaN or absurd timeout counts as none).
        jogTimeoutTicks = max(1, tickCount(seconds: jogTimeoutSeconds, tickSeconds: dt))
        let n = rig.axes.count
        var pose = [Double](repeating: 0, count: n)
        for i in 0..<n { pose[i] = i < startPose.count ? startPose[i] : rig.axes[i].home }
        frame = pose
        moveTarget = pose.map { $0 }
        controller = JogController(axes: rig.axes, tickSeconds: dt)
        limiter = MotionLimiter(axes: rig.axes, tickSeconds: dt, startPose: pose)
        zeros = [Double](repeating: 0, count: n)
        jogTargets = [Double](repeating: 0, count: n)
        speedScales = [Double](repeating: 1, count: n)
        unshapedAxes = rig.axes.map(\.forUnshapedMoves)
        scaledAxes = unshapedAxes
        clampedAxes = []
        clampedAxes.reserveCapacity(n)
    }

    /// The pose of the last emitted frame (the start pose before the first tick).
    public var positions: [Double] { limiter.positions }

    /// Velocities of the last emitted frame, per second.
    public var velocities: [Double] { limiter.velocities }

    /// Per axis: moving, or about to (a move or jog not yet done).
    public var isMoving: [Bool] {
        rig.axes.indices.map { i in
            if abs(limiter.velocities[i]) > rig.axes[i].maxVelocity * 1e-9 { return true }
            switch mode {
            case .jogging: return jogTargets[i] != 0
            case .settling where !followTracks.isEmpty, .following: return followTracks.indices.contains(i) && followTracks[i] != nil
            case .settling, .moving, .parking: return moveTarget[i] != limiter.positions[i]
            case .idle, .braking, .stopping, .finished: return false
            }
        }
    }

    /// Every axis is still and no move or jog is under way.
    public var isAtRest: Bool {
        switch mode {
        case .idle, .finished: controller.isAtRest
        default: false
        }
    }

    public var isFinished: Bool { mode == .finished }

    /// Commands have no steps: nothing to advance.
    public mutating func advance() {}

    public mutating func stop() {
        guard !stopRequested else { return }
        stopRequested = true
        mode = .stopping
    }

    /// The rig stood still through a stall: whatever moved halts from rest where it is
    /// (a park is planned again from there); the source goes on taking commands.
    public mutating func stallStop() -> Bool {
        limiter.rest()
        controller.follow(velocities: zeros)
        followTracks = []
        switch mode {
        case .parking: beginMove(parking: true)
        case .jogging, .moving, .settling, .following: mode = .braking
        case .idle, .braking, .stopping, .finished: break
        }
        return stopRequested
    }

    public var progress: PlaybackProgress {
        let phase: ProgressPhase =
            switch mode {
            case .idle: .idle
            case .jogging: .jogging
            case .braking: .braking
            case .settling: .settling
            case .moving: .moving
            case .following: .following
            case .stopping: .braking
            case .parking: .parking
            case .finished: .finished
            }
        return PlaybackProgress(elapsedSeconds: Double(tickIndex) * rig.tickSeconds, phase: phase)
    }

    /// A motion command from the loop's mailbox (program requests are not its to take).
    public mutating func receive(_ request: SourceRequest) {
        if case .motion(let command) = request { apply(command) }
    }

    /// Applies `command` now (for the owner on the loop thread; other threads post to the
    /// loop's mailbox). Ignored once `stop()` was called.
    public mutating func apply(_ command: MotionCommand) {
        guard !stopRequested else { return }
        let n = rig.axes.count
        switch command {
        case .goTo(let pose):
            guard pose.count == n, pose.allSatisfy({ $0?.isFinite ?? true }) else {
                rejectedCommands += 1
                return
            }
            clampedAxes.removeAll(keepingCapacity: true)
            for i in 0..<n {
                guard let wanted = pose[i] else {
                    moveTarget[i] = .nan
                    continue
                }
                let axis = rig.axes[i]
                let target = min(max(wanted, axis.softMin), axis.softMax)
                if target != wanted { clampedAxes.append(i) }
                moveTarget[i] = target
            }
            // Where an axis with no target stops is known only once the rig is at rest.
            followTracks = []
            mode = .settling
        case .jog(let fractions):
            guard fractions.count == n, fractions.allSatisfy(\.isFinite) else {
                rejectedCommands += 1
                return
            }
            for i in 0..<n {
                let f = min(max(fractions[i], -1), 1)
                jogTargets[i] = f * scaledAxes[i].maxVelocity
            }
            // Commands arrive between ticks: this one is for the coming tick.
            lastJogTick = tickIndex + 1
            mode = .jogging
        case .follow(let tracks):
            guard tracks.count == n else {
                rejectedCommands += 1
                return
            }
            followTracks = tracks
            followCursors = [Int](repeating: 0, count: n)
            followEndSeconds = tracks.reduce(0) { max($0, $1?.endTime ?? 0) }
            mode = .settling
        case .halt:
            if mode != .idle { mode = .braking }
        case .setSpeedScale(let axis, let fraction):
            guard rig.axes.indices.contains(axis), fraction > 0, fraction <= 1 else {
                rejectedCommands += 1
                return
            }
            speedScales[axis] = fraction
            scaledAxes[axis].maxVelocity = rig.axes[axis].maxVelocity * fraction
        }
    }

    /// A program that played through `passThrough` ended parked, at rest: its last frame's
    /// last small step must not leave the commands "moving" (the next play, asked for the
    /// moment the status says idle, was refused for it and lost).
    public mutating func settleAfterProgram() {
        limiter.rest()
        controller.follow(velocities: limiter.velocities)
    }

    /// Emits `external` (a program's frame, played by the owner) through the limiter and
    /// adopts it, so that later commands continue from where it left the rig. Leaves a move
    /// or jog under way: the source is idle afterwards. Returns the limiter's verdict: the
    /// first axis it had to bend, or nil when the frame was within every limit (a program
    /// that `check` accepted never needs bending; the owner stops one that does).
    @discardableResult
    public mutating func passThrough(_ external: inout [Double]) -> Int? {
        tickIndex += 1
        let limited = limiter.limit(&external)
        controller.follow(velocities: limiter.velocities)
        if !stopRequested { mode = .idle }
        return limited
    }

    public mutating func tick(into out: inout [Double]) -> PlayerEvent? {
        tickIndex += 1
        for i in frame.indices { frame[i] = limiter.positions[i] }
        var event: PlayerEvent?
        switch mode {
        case .idle:
            // At rest this is a no-op; after a preview it brakes what the preview left.
            controller.step(targetVelocities: zeros, positions: &frame)
        case .finished:
            break
        case .jogging:
            if tickIndex - lastJogTick > jogTimeoutTicks {
                deadmanStops += 1
                mode = .braking
                brake()
            } else {
                controller.step(targetVelocities: jogTargets, positions: &frame)
            }
        case .braking:
            brake()
        case .settling:
            brake()
            if controller.isAtRest, !followTracks.isEmpty {
                followTick = 0
                mode = .following
                sampleFollow()
            } else if controller.isAtRest {
                beginMove(parking: false)
                sampleMove()
            }
        case .moving:
            sampleMove()
        case .following:
            sampleFollow()
        case .stopping:
            brake()
            if controller.isAtRest {
                event = .programEnded(stopped: true)
                beginMove(parking: true)
            }
        case .parking:
            sampleMove()
            if moveTick >= move.ticks {
                mode = .finished
                event = .finished
            }
        }
        _ = limiter.limit(&frame)
        controller.follow(velocities: limiter.velocities)
        for i in frame.indices { out[i] = frame[i] }
        return event
    }

    /// One tick of braking at maxAcceleration; idle once at rest (after a halt or deadman).
    private mutating func brake() {
        controller.step(targetVelocities: zeros, positions: &frame)
        if mode == .braking, controller.isAtRest { mode = .idle }
    }

    private mutating func beginMove(parking: Bool) {
        for i in moveTarget.indices {
            if parking {
                moveTarget[i] = rig.axes[i].park.map { min(max($0, rig.axes[i].softMin), rig.axes[i].softMax) } ?? frame[i]
            } else if moveTarget[i].isNaN {
                moveTarget[i] = frame[i]
            }
        }
        // A stop's park uses the rig's own limits: a client's speed scale (DFMoco `pr`,
        // serve) governs its moves, never how fast the rig gets to safety.
        move.plan(from: frame, to: moveTarget, axes: parking ? unshapedAxes : scaledAxes, tickSeconds: rig.tickSeconds)
        moveTick = 0
        mode = parking ? .parking : .moving
    }

    /// One tick of `.follow`: the tracks at (ticks since the rig was at rest) × dt, so the
    /// frame of the tick that starts them is the tracks at one tick. Idle once every track
    /// has ended.
    private mutating func sampleFollow() {
        followTick += 1
        let t = Double(followTick) * rig.tickSeconds
        for i in frame.indices {
            guard let track = followTracks[i] else { continue }
            frame[i] = track.value(at: t, cursor: &followCursors[i])
        }
        if t >= followEndSeconds {
            followTracks = []
            mode = .idle
        }
    }

    private mutating func sampleMove() {
        if moveTick < move.ticks {
            moveTick += 1
            move.sample(tick: moveTick, tickSeconds: rig.tickSeconds, into: &frame)
        }
        if mode == .moving, moveTick >= move.ticks { mode = .idle }
    }
}
