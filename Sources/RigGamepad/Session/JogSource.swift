import RigCore
import RigRuntime

/// The motion source of `rig jog`: turns gamepad (or keyboard) input into `MotionCommand`s
/// for the program host (`ProgramHost`: the same command source as `rig serve` and DFMoco,
/// the same host `rig play` and `rig serve` play programs on), one tick at a time. Runs on
/// the loop thread; reads input from a `GamepadInput`, reports to the session through
/// `notices`.
///
/// - Sticks set jog velocities (deadzone, expo, snap, speed level) that the command source
///   reaches within each axis's acceleration, slowing to a stop before soft limits.
/// - Home and d-pad nudges are `.goTo` moves (from rest); preview plays the recording on
///   the host, through its command source's limiter, ending where the recording does (no
///   park). A stick pushed during one takes over at once (decelerating within the limits).
/// - Safety: the device vanishing, or (while a stick drives the rig) no sign of input
///   life for `watchdogMilliseconds` — counted in loop ticks, not wall time — brings the
///   rig to a stop at maxAcceleration; it moves again only once input is back.
/// - `stop()` (Ctrl-C) brakes to rest, parks (axes with a park position) and finishes.
public struct JogSource: MotionSource {
    /// What the source is doing.
    public enum Mode: Sendable, Equatable {
        case jogging
        /// Braking to rest before a planned move or preview.
        case settling(then: Plan)
        case moving(Plan)
        /// At rest, the preview asked for: the session's thread builds its player.
        case awaitingPreview
        case previewing
        case stopping
        case finished
    }

    public enum Plan: Sendable, Equatable {
        case home, nudge, preview
    }

    public let rig: Rig
    public let config: JogConfig
    public let notices: SPSCRing<JogNotice>
    public private(set) var mode = Mode.jogging
    public private(set) var tickIndex = 0
    /// 0 fine, 1 normal, 2 coarse.
    public private(set) var speedLevel = 1
    /// The motion itself (commands, and the preview as a program); also takes commands
    /// other threads post to the loop's mailbox.
    public private(set) var host: ProgramHost
    /// True while the watchdog holds the rig (no input while jogging).
    public private(set) var watchdogHolding = false

    private let input: GamepadInput
    private let previewSlot: PreviewSlot
    private let speeds: [Double]
    private let watchdogTicks: Int
    private let pulseHoldTicks: Int
    /// Per stick (leftx, lefty, rightx, righty): the axis it drives (−1: none) and its sign.
    private let stickAxis: [Int]
    private let stickSign: [Double]
    private var shaper: StickShaper
    private var seen = GamepadSnapshot()
    private var lastLifeTick = 0
    /// Jog velocities as fractions of maxVelocity (reused every tick: no allocation).
    private var fractions: [Double]
    private var zeros: [Double]
    private var pendingNudge: [Double]
    /// Where a nudge or home goes (no nil: every axis has a target).
    private var moveTarget: [Double?]
    private var frame: [Double]
    private var previewStopping = false
    private var pulseTicks = SIMD4<Int32>(repeating: 0)

    /// - Parameters:
    ///   - deviceFlatFraction: the device's `flat` as a fraction of stick travel (the
    ///     deadzone is never smaller).
    public init(
        rig: Rig, config: JogConfig, input: GamepadInput, preview: PreviewSlot, startPose: [Double],
        notices: SPSCRing<JogNotice>, deviceFlatFraction: Double = 0
    ) {
        self.rig = rig
        self.config = config
        self.input = input
        self.previewSlot = preview
        self.notices = notices
        preview.reserve(axisCount: rig.axes.count)
        speeds = config.speedLevels
        let dt = rig.tickSeconds
        watchdogTicks = max(1, tickCount(seconds: config.watchdogMilliseconds / 1000, tickSeconds: dt))
        pulseHoldTicks = max(1, tickCount(seconds: 0.5, tickSeconds: dt, slack: -1e-9))
        var axis = [Int](repeating: -1, count: 4)
        var sign = [Double](repeating: 1, count: 4)
        for (k, stick) in JogConfig.Stick.allCases.enumerated() {
            if let assignment = config.sticks[stick], rig.axes.indices.contains(assignment.axis) {
                axis[k] = assignment.axis
                sign[k] = assignment.inverted ? -1 : 1
            }
        }
        stickAxis = axis
        stickSign = sign
        let current = input.snapshot
        shaper = StickShaper(config: config, deviceFlatFraction: max(deviceFlatFraction, current.stickFlat))
        // No jog deadman of its own: this source sends a jog every tick, and its watchdog
        // (signs of input life) is what stops a silent stick.
        host = ProgramHost(rig: rig, startPose: startPose, jogTimeoutSeconds: 1)
        let zero = [Double](repeating: 0, count: rig.axes.count)
        fractions = zero
        zeros = zero.map { $0 }
        pendingNudge = zero.map { $0 }
        moveTarget = startPose.map { $0 }
        frame = startPose.map { $0 }
        seen = current
    }

    /// The pose of the last emitted frame.
    public var positions: [Double] { host.positions }

    /// Velocities of the last emitted frame.
    public var velocities: [Double] { host.velocities }

    /// Widens the deadzone to the device's `flat` (called when a gamepad is opened).
    public mutating func setDeviceFlat(_ fraction: Double) {
        shaper = StickShaper(config: config, deviceFlatFraction: fraction)
    }

    public var isFinished: Bool { mode == .finished }

    /// A motion command another thread posted to the loop's mailbox: the host takes it.
    public mutating func receive(_ request: SourceRequest) { host.receive(request) }

    public mutating func advance() {}

    public mutating func stop() {
        switch mode {
        case .finished, .stopping: return
        case .previewing:
            host.stopProgram()
            previewStopping = true
        case .awaitingPreview:
            previewSlot.cancel()
        default: break
        }
        mode = .stopping
    }

    public var progress: PlaybackProgress {
        let phase: ProgressPhase
        switch mode {
        case .jogging:
            if watchdogHolding {
                phase = .jog(.heldNoInput)
            } else {
                switch speedLevel {
                case 0: phase = .jog(.fine)
                case 1: phase = .jog(.normal)
                default: phase = .jog(.coarse)
                }
            }
        case .settling: phase = .settling
        case .moving(.home): phase = .jog(.movingHome)
        case .moving: phase = .jog(.nudge)
        case .awaitingPreview, .previewing: phase = .jog(.preview)
        case .stopping: phase = .stopping
        case .finished: phase = .finished
        }
        return PlaybackProgress(elapsedSeconds: Double(tickIndex) * rig.tickSeconds, phase: phase)
    }

    public mutating func tick(into out: inout [Double]) -> PlayerEvent? {
        tickIndex += 1
        let snap = input.snapshot
        if snap.signsOfLife != seen.signsOfLife { lastLifeTick = tickIndex }
        if snap.connected != seen.connected || snap.generation != seen.generation {
            notify(snap.connected ? .inputConnected : .inputLost)
            if snap.stickFlat != seen.stickFlat { setDeviceFlat(snap.stickFlat) }
        }
        let wasAwaiting = mode == .awaitingPreview
        let pressed = readPresses(snap)
        seen = snap
        // A press (home, a new preview) took the rig elsewhere: the request is void.
        if wasAwaiting, mode != .awaitingPreview { previewSlot.cancel() }

        // Stick deflection → target velocities.
        var raw = snap.sticks
        for k in 0..<4 where pulseTicks[k] > 0 {
            pulseTicks[k] -= 1
            raw[k < 2 ? 0 : 1] = k % 2 == 0 ? -1 : 1
        }
        if !snap.connected { raw = .zero }
        let left = shaper.shape(x: raw[0], y: raw[1])
        let right = shaper.shape(x: raw[2], y: raw[3])
        let shaped = SIMD4<Double>(left.x, left.y, right.x, right.y)
        let stickActive = shaped != .zero
        for i in fractions.indices { fractions[i] = 0 }
        let speed = speeds[speedLevel]
        for k in 0..<4 where stickAxis[k] >= 0 {
            let axis = stickAxis[k]
            fractions[axis] += stickSign[k] * shaped[k] * speed
        }
        let quiet = tickIndex - lastLifeTick > watchdogTicks
        let inputUsable = snap.connected && !quiet

        var event: PlayerEvent?
        switch mode {
        case .jogging:
            if stickActive, !inputUsable {
                if !watchdogHolding, snap.connected { notify(.watchdogStopped) }
                watchdogHolding = true
            } else if inputUsable {
                watchdogHolding = false
            }
            if watchdogHolding || !snap.connected {
                host.apply(.jog(velocityFractions: zeros))
            } else if !stickActive, host.isAtRest || host.commandMode == .jogging && isStill, hasPendingNudge {
                for i in frame.indices {
                    let margin = JogController.limitMargin(a: rig.axes[i].maxAcceleration, dt: rig.tickSeconds)
                    moveTarget[i] = min(max(host.positions[i] + pendingNudge[i], rig.axes[i].softMin + margin), rig.axes[i].softMax - margin)
                    pendingNudge[i] = 0
                }
                host.apply(.goTo(pose: moveTarget))
                mode = .moving(.nudge)
            } else {
                host.apply(.jog(velocityFractions: fractions))
            }
            event = host.tick(into: &frame)
        case .settling(let plan):
            if stickActive || !snap.connected {
                mode = .jogging
                host.apply(.jog(velocityFractions: snap.connected ? fractions : zeros))
                event = host.tick(into: &frame)
            } else {
                event = host.tick(into: &frame)
                if host.isAtRest { start(plan) }
            }
        case .moving:
            if stickActive || !snap.connected {
                mode = .jogging
                host.apply(.jog(velocityFractions: snap.connected ? fractions : zeros))
            }
            event = host.tick(into: &frame)
            if case .moving = mode, host.commandMode == .idle { mode = .jogging }
        case .awaitingPreview:
            if stickActive || !snap.connected {
                previewSlot.cancel()
                mode = .jogging
                host.apply(.jog(velocityFractions: snap.connected ? fractions : zeros))
            } else if playPreparedPreview() {
                previewStopping = false
                mode = .previewing
                notify(.previewStarted)
            }
            event = host.tick(into: &frame)
        case .previewing:
            if stickActive || pressed || !snap.connected, !previewStopping {
                host.stopProgram()
                previewStopping = true
            }
            event = host.tick(into: &frame)
            if host.program == nil {
                mode = .jogging
                notify(.previewEnded)
            }
        case .stopping:
            // The host stops the preview if one plays, then parks and finishes.
            host.stop()
            event = host.tick(into: &frame)
            if host.isFinished { mode = .finished }
        case .finished:
            break
        }

        for i in frame.indices { out[i] = frame[i] }
        return event
    }

    /// Every axis is still (jogging with the sticks centred, or at rest).
    private var isStill: Bool {
        for v in host.velocities where v != 0 { return false }
        return true
    }

    // MARK: Input

    private var hasPendingNudge: Bool {
        for x in pendingNudge where x != 0 { return true }
        return false
    }

    /// Acts on presses since the last tick; true if there were any.
    private mutating func readPresses(_ snap: GamepadSnapshot) -> Bool {
        guard mode != .stopping, mode != .finished else { return false }
        var pressed = false
        for action in Self.actionOrder {
            let count = snap.actions[action.slot] &- seen.actions[action.slot]
            guard count > 0 else { continue }
            pressed = true
            // While previewing, a press only interrupts the preview (and save/quit still end).
            if mode == .previewing, action != .save, action != .quit { continue }
            for _ in 0..<min(count, 8) { handle(action) }
        }
        let step = config.nudgeStep
        for k in 0..<4 {
            let count = snap.nudges[k] &- seen.nudges[k]
            guard count > 0 else { continue }
            pressed = true
            guard mode != .previewing else { continue }
            // Up/down nudge the left stick's Y axis, left/right its X axis, in the sense
            // the stick would move them (up is negative on the device).
            let stick = k < 2 ? 1 : 0
            let direction: Double = k % 2 == 0 ? -1 : 1
            let axis = stickAxis[stick]
            if axis >= 0 { pendingNudge[axis] += stickSign[stick] * direction * step * Double(min(count, 100)) }
        }
        for k in 0..<4 where snap.pulses[k] != seen.pulses[k] {
            pulseTicks[k] = Int32(pulseHoldTicks)
        }
        return pressed
    }

    private static let actionOrder: [JogConfig.Action] = [.record, .delete, .home, .preview, .save, .slower, .faster, .quit]

    private mutating func handle(_ action: JogConfig.Action) {
        switch action {
        case .record:
            notify(.record(pose: host.positions))
        case .delete:
            notify(.deleteLast)
        case .home:
            for i in rig.axes.indices {
                let margin = JogController.limitMargin(a: rig.axes[i].maxAcceleration, dt: rig.tickSeconds)
                moveTarget[i] = min(max(rig.axes[i].home, rig.axes[i].softMin + margin), rig.axes[i].softMax - margin)
            }
            host.apply(.halt)
            mode = .settling(then: .home)
        case .preview:
            if previewSlot.current == nil {
                notify(.nothingToPreview)
            } else {
                host.apply(.halt)
                mode = .settling(then: .preview)
            }
        case .save:
            notify(.save)
            stop()
        case .quit:
            notify(.quit)
            stop()
        case .slower, .faster:
            let level = min(max(speedLevel + (action == .faster ? 1 : -1), 0), speeds.count - 1)
            if level != speedLevel {
                speedLevel = level
                notify(.speed(level: level, fraction: speeds[level]))
            }
        case .none:
            break
        }
    }

    // MARK: Planned moves and preview

    private mutating func start(_ plan: Plan) {
        switch plan {
        case .home, .nudge:
            if plan == .home { notify(.homing) }
            host.apply(.goTo(pose: moveTarget))
            mode = .moving(plan)
        case .preview:
            // The session's thread builds it from this rest pose (`PreviewSlot`).
            guard previewSlot.request(from: host.positions) else {
                mode = .jogging
                notify(.nothingToPreview)
                return
            }
            mode = .awaitingPreview
        }
    }

    /// Plays the preview the session's thread built, once it is there (its player came
    /// built from this very pose: nothing to allocate here). False until then.
    private mutating func playPreparedPreview() -> Bool {
        guard let program = previewSlot.takeReady() else { return false }
        guard host.play(program) else {
            mode = .jogging
            return false
        }
        return true
    }

    private func notify(_ notice: JogNotice) {
        _ = notices.push(notice)
    }
}
