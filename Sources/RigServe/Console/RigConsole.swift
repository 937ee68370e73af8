import Dispatch
import FoundationEssentials
import Glibc
import Logging
import RigCore
import RigFormat
import RigGamepad
import RigGroup
import RigRuntime
import RigSky
import Synchronization

/// The rig as the server sees it: one `ProgramHost` run by the session runner on a
/// background thread, from the server's start to its end (a signal parks the rig and
/// ends it). Every motion the server asks for is a `MotionCommand` or a `ProgramRequest`
/// posted to that source, so the same limiter, lock and safe state apply as in `rig play`
/// and `rig jog`. Methods may be called from any thread.
///
/// `@unchecked Sendable`: the session is touched only by `start()` (once) and its own
/// thread; everything else that changes is behind `shared`.
public final class RigConsole: @unchecked Sendable {
    public let rig: Rig
    /// The loop's one mailbox: motion commands and program requests go in here.
    public let mailbox = SourceMailbox()
    /// The rig file's jog feel: expo applies to `/api/jog`.
    public let jogConfig: JogConfig
    private let outputType: String
    private let outputBox: OutputBox
    private let session: RigSession<ProgramHost>
    let shared = Mutex(Shared())
    private let started = DispatchSemaphore(value: 0)
    private let ended = DispatchSemaphore(value: 0)
    /// The rig's camera, open for the server's life: every program's steps are shot with it.
    let camera: Camera?
    let shotLogs: RunLogDirectory?
    let logger: Logger
    /// The shots of the program playing (its log, the camera's reports).
    let runner = Mutex<ShotRunner?>(nil)
    /// The photographer's nudge on the playing program's exposure ramp (`POST /api/nudge`):
    /// back to 0 when a program starts.
    let rampNudge = RampNudge()
    /// Leading a group (`rig serve --group`): each program's link while it plays, and the
    /// last one's view for the status.
    let groupLeading: GroupLeading?
    /// Leading a group: the loop's shared timeline, armed for each keyframes path the group
    /// plays (on the group's clock: held with the group when a rig is lost, resumed together).
    let groupTimeline: SharedTimeline?
    /// A `"liveView"` settle (`options.stillness`): the live view measured while a program plays.
    private let liveViewSettle: LiveViewStillnessOnDemand?
    let groupLink = Mutex<PendingLink?>(nil)
    let lastGroup = Mutex<GroupSnapshot?>(nil)
    /// Told when the status may have changed (a loop event, a shot, the end): the event
    /// stream wakes on it instead of polling.
    private let changeHandler = Mutex<(@Sendable () -> Void)?>(nil)
    /// Held while a scheduled program is launched, and by STOP while it decides between
    /// cancelling a wait and stopping a program: a STOP is never posted ahead of the
    /// program it stops.
    private let launchGate = Mutex<Int>(0)
    /// UTC now, Unix seconds: what a program's `"start"` is waited for on (a test's own).
    public let wallClock: @Sendable () -> Double

    /// A program started from the server: what the status shows about it.
    struct Run: Sendable {
        /// Which play this is (a scheduled start launches only the run it waited for).
        var id: Int = 0
        var name: String
        var stepCount: Int
        /// From the feasibility check (auto-advanced), plus interval waits; nil when a
        /// person advances each step.
        var estimatedSeconds: Double?
        /// The host said it took the program (`HostEvent.started`); until then it is posted.
        var started = false
        /// Waiting for the program's `"start"` (nothing posted to the loop yet); nil once
        /// it was launched, or for a program that starts at once.
        var startsAt: ProgramStart?
    }

    struct Shared: Sendable {
        var run: Run?
        var lastRunID = 0
        var lastStop: ServeStatus.LastStop?
        var startError: String?
        var summary: SessionSummary?
        var lastError: String?
        /// The loop tick a Next was taken at.
        var nextTakenAtTick: Int?
        var lastShot: ServeStatus.LastShot?
        /// The last frame's preview image, for `/api/last-shot/preview`.
        var lastPreview: String?
        /// Where the last tap to focus put the AF point, in the live view (0…1 each way).
        var focusPoint: ServeStatus.ViewPoint?
        /// A test shot is being taken (`testShot`): no program starts meanwhile.
        var testShotUnderWay = false
    }

    /// `Output` is not `Sendable`; the server only reads `statusLine`, which outputs
    /// must allow from any thread.
    private final class OutputBox: @unchecked Sendable {
        let output: Output
        init(_ output: Output) { self.output = output }
    }

    /// - Parameters:
    ///   - startPose: where the rig stands (`StartPose.resolve`).
    ///   - options: the session's options (a trace, loop options); the loop keeps going
    ///     when the limiter bends a jog frame, as in `rig jog`.
    ///   - camera: the rig's camera, made by the caller; the session starts it and closes it when it ends.
    ///   - shotLogs: where each program's shot log goes (none: no log, the shots still fire).
    public init(
        rig: Rig, output: Output, startPose: [Double], options: SessionOptions, logger: Logger,
        clock: LoopClock = MonotonicClock(), jogTimeoutSeconds: Double = 0.25, camera: Camera? = nil, shotLogs: RunLogDirectory? = nil,
        group: GroupLeading? = nil, wallClock: @escaping @Sendable () -> Double = { Date().timeIntervalSince1970 }
    ) {
        self.rig = rig
        self.wallClock = wallClock
        self.groupLeading = group
        self.camera = camera
        self.shotLogs = shotLogs
        self.logger = logger
        jogConfig = JogConfig.of(rig)
        outputType = rig.output.type
        outputBox = OutputBox(output)
        var options = options
        options.loop.stopWhenLimited = false
        groupTimeline = group != nil ? SharedTimeline() : nil
        options.loop.sharedTimeline = groupTimeline
        liveViewSettle = options.stillness as? LiveViewStillnessOnDemand
        let source = ProgramHost(rig: rig, startPose: startPose, jogTimeoutSeconds: jogTimeoutSeconds)
        // The camera is a part of the session: locked and started with the output, closed
        // when the session ends; each program's shot runner fires it meanwhile. The
        // console follows the loop as a part too.
        let follower = Follower()
        session = RigSession(
            rig: rig, source: source, output: output, startPose: startPose, camera: camera, parts: [follower],
            options: options, logger: logger, clock: clock, mailbox: mailbox)
        follower.console = self
        // A camera found late changes the status (and what programs can be played).
        (camera as? LateCamera)?.onConnected { [weak self] in
            self?.changed()
            self?.followLiveView()
        }
        followLiveView()
    }

    /// The status follows the camera's live view, and the log says when its frames stall.
    private func followLiveView() {
        liveViewFeed?.onChange { [weak self] in self?.changed() }
        liveViewFeed?.onNote { [logger] line in logger.warning("camera: \(line)") }
    }

    /// Calls `handler` (any thread) whenever the status may have changed: a loop event, a
    /// shot or its measures, the session's end.
    public func onChange(_ handler: @escaping @Sendable () -> Void) {
        changeHandler.withLock { $0 = handler }
    }

    func changed() { changeHandler.withLock { $0 }?() }

    /// Opens the output and starts the loop on a background thread; returns once it runs.
    /// Throws (nothing moved) if the output cannot start.
    public func start() throws(ServeError) {
        SystemThread.start(name: "rig-session") { [self] in
            // The follower records how it ended (`finish`).
            _ = try? session.run()
            ended.signal()
            changed()
        }
        started.wait()
        if let error = shared.withLock({ $0.startError }) {
            throw ServeError(.serviceUnavailable, error)
        }
    }

    /// The console's part of the session: told when the loop exists, of every loop event,
    /// and of the session's end.
    private final class Follower: SessionPart {
        weak var console: RigConsole?
        var partName: String { "console" }
        func start(_ door: SessionDoor) throws(PartStartFailure) { console?.started.signal() }
        func handle(_ event: LoopEvent) { console?.handle(event) }
        func poll() { console?.groupPoll() }
        func finish(_ outcome: SessionOutcome) { console?.finish(outcome) }
    }

    private func handle(_ event: LoopEvent) {
        defer { changed() }
        if case .outputFault(let fault, _) = event { shared.withLock { $0.lastError = fault.description } }
        if case .limiterIntervened(let axis, _) = event {
            shared.withLock { $0.lastError = "the limiter had to bend axis \"\(axis)\": the program was stopped" }
        }
        if case .host(let done, _) = event { follow(done) }
        if case .player(.programEnded, _) = event { liveViewSettle?.end() }
        groupHandle(event)
        guard let shots = runner.withLock({ $0 }) else { return }
        shots.handle(event)
        if case .player(.programEnded, _) = event {
            shots.finish(loopFault: nil, stoppedBySignal: false)
            runner.withLock { if $0 === shots { $0 = nil } }
        }
    }

    /// The session ended (or never started: `start()` is told why).
    private func finish(_ outcome: SessionOutcome) {
        switch outcome {
        case .ran(let summary): shared.withLock { $0.summary = summary }
        case .refused(let error):
            shared.withLock { $0.startError = "\(error)" }
            started.signal()
        }
        runner.withLock { $0 }?.finish(loopFault: nil, stoppedBySignal: true)
        liveViewSettle?.end()
        groupFinish(outcome)
    }

    /// The run's bookkeeping follows what the host did: a posted program started, was
    /// refused (said, not dropped silently), or ended.
    private func follow(_ done: HostEvent) {
        switch done {
        case .started(let name, _):
            shared.withLock { s in if s.run?.name == name { s.run?.started = true } }
        case .refused(.play, let why):
            let refused = shared.withLock { s -> Bool in
                guard let run = s.run, !run.started else { return false }
                s.run = nil
                s.lastError = "\(run.name) did not start: \(why); nothing moved, play it again"
                return true
            }
            if refused {
                liveViewSettle?.end()
                let shots = runner.withLock { r -> ShotRunner? in
                    defer { r = nil }
                    return r
                }
                shots?.finish(loopFault: nil, stoppedBySignal: false)
            }
        case .refused:
            break
        case .ended:
            shared.withLock { s in if s.run?.started == true { s.run = nil } }
        }
    }

    /// Brakes, parks and ends the session (the server is shutting down).
    public func requestShutdown() {
        session.requestShutdown()
    }

    /// Blocks until the session has ended (a signal, `requestShutdown`, a fault).
    public func waitUntilEnded() -> SessionSummary? {
        ended.wait()
        ended.signal()
        return shared.withLock { $0.summary }
    }

    /// The session has ended.
    public var hasEnded: Bool { shared.withLock { $0.summary != nil || $0.startError != nil } }

    /// The loop's live snapshot (the start pose at rest before the loop runs).
    public var loopStatus: LoopStatus? { session.status }

    /// The pose of the last frame sent.
    public var pose: [Double] { loopStatus?.positions ?? rig.homePose }

    // MARK: Status

    public func status(controller: String?) -> ServeStatus {
        let loopStatus = self.loopStatus
        let line = outputBox.output.statusLine
        var pose: [String: Double] = [:]
        for (i, axis) in rig.axes.enumerated() {
            // Rounded to 1/1000 of the unit: a phone does not need more, and events stay short.
            pose[axis.name] = ((loopStatus?.positions[i] ?? axis.home) * 1000).rounded() / 1000
        }
        let (run, summary, lastError) = shared.withLock { s in (s.run, s.summary, s.lastError) }
        var status = ServeStatus(
            state: .idle, program: nil, step: nil, steps: nil, elapsedSeconds: nil, etaSeconds: nil,
            pose: pose, output: .init(type: outputType, state: line ?? (summary == nil ? "running" : "stopped")),
            error: lastError, controller: controller, lastStop: shared.withLock { $0.lastStop }, lastShot: shared.withLock { $0.lastShot },
            camera: cameraState)
        status.group = groupStatus
        if let summary {
            status.state = summary.loop.fault == nil ? .idle : .fault
            status.error = summary.loop.fault.map { "\($0)" } ?? lastError
            return status
        }
        guard let loopStatus else { return status }
        let progress = loopStatus.progress
        // The API's states are an encoding of the host's typed phase.
        status.state = Self.apiState(progress, programPending: run.map { !$0.started } ?? false)
        if let run, let start = run.startsAt {
            // Waiting for its start: nothing posted, nothing moves.
            status.state = .scheduled
            status.program = run.name
            status.steps = run.stepCount > 0 ? run.stepCount : nil
            let now = wallClock()
            status.start = ServeStatus.StartStatus(
                at: UTCTime.isoSeconds(start.unix), event: start.event, inSeconds: max(0, (start.unix - now).rounded(.up)),
                text: StartClock.describe(start, now: now))
            return status
        }
        if let run {
            status.program = run.name
            status.steps = run.stepCount > 0 ? run.stepCount : nil
            let playing = run.started && progress.inProgram
            status.step = playing ? progress.step : nil
            let elapsed = playing ? progress.elapsedSeconds : 0
            status.elapsedSeconds = (elapsed * 100).rounded() / 100
            // Paused time does not count down the ETA: the run is that much later.
            let paused = playing ? progress.pausedSeconds : 0
            status.etaSeconds = run.estimatedSeconds.map { (max(0, $0 - elapsed + paused) * 10).rounded() / 10 }
            if runner.withLock({ $0?.rampNudge != nil }) { status.nudgeEV = (rampNudge.ev * 1000).rounded() / 1000 }
        }
        return status
    }

    /// The API's `state` for the host's progress: a program is `playing`, `waiting` (at a
    /// step or at home), `paused`, or `moving` while it brakes and parks; otherwise `idle`
    /// (or `playing` for a program posted and not yet taken), `jogging` or `moving`.
    static func apiState(_ progress: PlaybackProgress, programPending: Bool) -> ServeState {
        if progress.inProgram {
            switch progress.phase {
            case .paused: return .paused
            case .waiting, .atHome: return .waiting
            case .braking, .parking, .finished: return .moving
            default: return .playing
            }
        }
        switch progress.phase {
        case .idle, .finished, .ready: return programPending ? .playing : .idle
        case .jogging: return .jogging
        default: return .moving
        }
    }

    /// A program is playing or about to (posted, not yet picked up).
    public var isPlaying: Bool { shared.withLock { $0.run != nil } }

    // MARK: Motion

    /// Starts `program` (already checked). Refused with 409 unless the rig is idle.
    /// - Parameters:
    ///   - programSha256: the file's hash, for its shot log.
    ///   - exposure: the program's frames for a camera the rig sets (`exposurePlan(for:)`),
    ///     given to the camera once the program has the rig.
    ///   - start: the program's `"start"`: a start still to come is waited for (`StartClock`,
    ///     as `rig play` waits) with nothing posted to the loop, the status `scheduled`;
    ///     STOP cancels it. Past or nil: it starts at once (the caller refuses a past one).
    public func play(
        _ program: HostedProgram, estimatedSeconds: Double?, programSha256: String = "", exposure: ExposurePlan? = nil,
        start: ProgramStart? = nil
    ) throws(ServeError) {
        let current = status(controller: nil)
        guard current.state == .idle else {
            throw ServeError(.conflict, "the rig is \(current.state)\(current.program.map { " (\($0))" } ?? ""); stop it first")
        }
        // What a group cannot play is refused before anything is claimed (or waited for).
        let played = groupLeading == nil ? program : try groupProgram(program)
        let waits = start.map { $0.unix > wallClock() } ?? false
        // Claimed under the lock: of two plays at once, one is refused here (the source
        // would refuse it too, but the status must name the one that plays).
        let claimed = shared.withLock { s -> Int? in
            guard s.run == nil, !s.testShotUnderWay else { return nil }
            s.lastStop = nil
            s.lastRunID += 1
            s.run = Run(
                id: s.lastRunID, name: program.name, stepCount: program.stepCount, estimatedSeconds: estimatedSeconds,
                startsAt: waits ? start : nil)
            s.lastError = nil
            return s.lastRunID
        }
        guard let id = claimed else { throw ServeError(.conflict, "another program was just started, or a test shot is under way") }
        guard waits, let start else {
            launch(played, original: program, sha: programSha256, exposure: exposure)
            return
        }
        logger.info("\(program.name) waits for its start at \(StartClock.describe(start)); the rig holds still until then")
        changed()
        SystemThread.start(name: "rig-start-wait") { [self] in
            let due = StartClock.wait(
                until: start.unix, now: wallClock, cancelled: { [self] in shared.withLock { $0.run?.id != id || $0.summary != nil } },
                tick: { [self] _ in changed() })
            guard due else { return }
            launchGate.withLock { _ in
                let still = shared.withLock { s -> Bool in
                    guard s.run?.id == id, s.run?.startsAt != nil, s.summary == nil else { return false }
                    s.run?.startsAt = nil
                    return true
                }
                if still {
                    logger.info("\(program.name): its start has come (\(StartClock.describe(start)))")
                    launch(played, original: program, sha: programSha256, exposure: exposure)
                }
            }
            changed()
        }
    }

    /// Posts a claimed program to the loop: its camera frames, its shots' runner, the
    /// track's clock, its player from where the rig rests, and a group's link.
    private func launch(_ played: HostedProgram, original: HostedProgram, sha programSha256: String, exposure: ExposurePlan?) {
        // Claimed: the camera's frames are this program's (no other run is using them).
        if let exposure, original.shooting.timing != nil { (camera as? SettableCamera)?.prepare(exposure) }
        // Claimed: no other play gets here until this one ends. The shots' runner is in
        // place before the program can take its first step.
        var program = played
        var shots: ShotRunner?
        if original.shooting.timing != nil, let camera {
            shots = makeRunner(original, camera: camera, sha: programSha256)
            runner.withLock { $0 = shots }
        }
        if program.stepCount > 0, let liveViewSettle {
            // A live-view settle: the live view is measured while this program plays.
            // A camera the rig waits for (off, or not found yet) is not "no camera".
            let measured = (camera as? LateCamera).map { $0.found } ?? camera
            switch camera != nil && measured == nil ? .failure("the camera is not connected yet") : liveViewSettle.begin(camera: measured) {
            case .success(let sensor): logger.info("\(original.name): settle measured in \(sensor)")
            case .failure(let why):
                logger.warning("\(original.name): the live view cannot measure the settle (\(why)): each step waits its timeout, then its fixed settleSeconds")
            }
        }
        program.startTrackClock(nowUnix: Date().timeIntervalSince1970)
        // The player is built here, from where the rig rests, not in the loop's tick.
        program.prepare(rig: rig, from: pose)
        // The group link is there before the program (it starts once the program has the rig).
        if let groupLeading {
            shots?.logsHolds = false
            prepareGroupLink(groupLeading, program: program, original: original, sha: programSha256, shots: shots)
        }
        mailbox.post(.play(program))
    }

    /// A step request for the program playing; 409 when none plays.
    /// - Parameter atStep: the 1-based step the client means (Next): refused unless the
    ///   program waits there.
    public func programRequest(_ request: ProgramRequest, atStep: Int? = nil) throws(ServeError) {
        let current = status(controller: nil)
        guard current.program != nil else { throw ServeError(.conflict, "no program is playing") }
        if current.state == .scheduled {
            throw ServeError(
                .conflict, "the program waits for its start (\(current.start?.text ?? "")); nothing done: STOP cancels it")
        }
        if let atStep, current.step != atStep {
            throw ServeError(.conflict, "the program is at step \(current.step.map(String.init) ?? "none"), not \(atStep); nothing done")
        }
        switch request {
        case .next:
            // One tap, one step: a Next during a move would be kept for the next wait and
            // skip that step's shot; a second before the loop took the first is refused.
            guard current.state.waitsForOperator else {
                throw ServeError(.conflict, "next works while the program waits at a step (it is \(current.state)); nothing done")
            }
            // The loop applies a request at its next tick and the status shows the move
            // after it: until then, a second Next is the same tap.
            let ticks = loopStatus?.ticks ?? 0
            let taken = shared.withLock { s in
                if let at = s.nextTakenAtTick, ticks <= at + 1 { return true }
                s.nextTakenAtTick = ticks
                return false
            }
            guard !taken else { throw ServeError(.conflict, "next was already taken at step \(current.step ?? 0); nothing done") }
        case .back, .redo:
            guard current.state.waitsForOperator else {
                throw ServeError(.conflict, "back and redo work while the program waits at a step (it is \(current.state))")
            }
        case .pause, .resume:
            guard current.steps != nil else { throw ServeError(.conflict, "a continuous path cannot pause; stop it instead") }
        default: break
        }
        mailbox.post(request)
    }

    /// Stops whatever moves: a program brakes and parks; a jog or a move brakes.
    /// Stops whatever moves; `by` (a display name) is remembered when it stops a program.
    public func stopMotion(by name: String? = nil) {
        // A program waiting for its start: cancelled, nothing was posted or moved.
        let cancelled = launchGate.withLock { _ in
            shared.withLock { s -> String? in
                guard let run = s.run, run.startsAt != nil else { return nil }
                if let name { s.lastStop = ServeStatus.LastStop(by: name, program: run.name, step: nil) }
                s.run = nil
                return run.name
            }
        }
        if let cancelled {
            logger.info("\(cancelled): cancelled before its start\(name.map { " by \($0)" } ?? ""); nothing moved")
            changed()
            return
        }
        if isPlaying {
            let now = status(controller: nil)
            if let name, let program = now.program {
                shared.withLock { $0.lastStop = ServeStatus.LastStop(by: name, program: program, step: now.step) }
            }
            mailbox.post(.stop)
        } else {
            mailbox.post(.halt)
        }
    }

    /// Jog at `fractions` (−1…1 of each axis's maxVelocity, after the rig's expo); must
    /// be repeated within the deadman time or the rig brakes.
    public func jog(_ fractions: [Double]) throws(ServeError) {
        guard !isPlaying else { throw ServeError(.conflict, "a program is playing; stop it before jogging") }
        let shaper = StickShaper(deadzone: 0, expo: jogConfig.expo)
        mailbox.post(.jog(velocityFractions: fractions.map { shaper.shape(x: min(max($0, -1), 1), y: 0).x }))
    }

    /// A limited move to `pose` (nil: the axis stays). Returns the axes whose target had
    /// to be clamped to a soft limit.
    public func goTo(_ pose: [Double?]) throws(ServeError) -> [String] {
        guard !isPlaying else { throw ServeError(.conflict, "a program is playing; stop it first") }
        var clamped: [String] = []
        for (i, axis) in rig.axes.enumerated() {
            if let v = pose[i], v < axis.softMin || v > axis.softMax { clamped.append(axis.name) }
        }
        mailbox.post(.goTo(pose: pose))
        return clamped
    }
}
