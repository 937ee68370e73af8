import Dispatch
import FoundationEssentials
import Glibc
import Logging
import RigCore
import RigFormat
import Synchronization

/// How a session runs.
public struct SessionOptions {
    public var loop = LoopOptions()
    /// `--trace FILE.csv`, if any. Checked and opened before the output starts.
    public var tracePath: String?
    /// The axes whose calibrations turn the trace's pulses into its `position_deg` (nil:
    /// the session's rig's): `rig calibrate servo` drives a raw-µs axis and traces the
    /// angle by the file's calibration.
    public var traceAxes: [Axis]?
    public var liveView: LiveView?
    /// Refresh period of the live view.
    public var viewIntervalSeconds = 0.1
    /// Files the run reads (program, rig): an output path naming one of them is refused.
    public var inputPaths: [String] = []
    /// Handle SIGINT, SIGTERM, SIGHUP, SIGPIPE and SIGQUIT (a command-line run). False when
    /// the caller owns the signals and calls `requestShutdown()` itself.
    public var trapSignals = true
    /// A failed write to stdout or stderr stops the run (brake, park, safe state).
    public var stopOnStreamFailure = true
    /// How often the output's remembered pose is saved while the rig runs (it writes only
    /// when the pose changed): after a SIGKILL it is at most this much motion old.
    public var persistIntervalSeconds = 0.25
    /// A sensor the loop reads every tick after the write (`rig calibrate resonance`).
    public var rates: RateRecorder?
    /// What measures the rig file's measured settle when it is not the output itself: the
    /// `"imu"` on the camera (`Devices.stillnessProbe`), the live view (`LiveViewMotion`, one
    /// of the session's parts). Started before the output, closed after the loop.
    public var stillness: StillnessProbe?

    public init(loop: LoopOptions = LoopOptions(), tracePath: String? = nil, liveView: LiveView? = nil) {
        self.loop = loop
        self.tracePath = tracePath
        self.liveView = liveView
    }
}

/// Why a session ended.
public enum SessionEnd: Sendable, Equatable, CustomStringConvertible {
    /// The source finished by itself (the program's end, quit in jog) or the loop stopped on a fault.
    case finished
    /// `requestShutdown()` (a server's stop, a GPIO stop button).
    case stopRequested
    /// A signal (SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGQUIT).
    case signal(Int32)
    /// A write to stdout or stderr failed.
    case streamFailed(StreamFailure)

    public var description: String {
        switch self {
        case .finished: "finished"
        case .stopRequested: "a stop request"
        case .signal(let signo): "\(SignalTrap.name(signo))"
        case .streamFailed(let failure): "\(failure)"
        }
    }
}

/// Why a session could not start. Nothing moved; the output, if it was started, is in
/// its safe state again.
public enum SessionError: Error, Sendable, CustomStringConvertible {
    /// An output path (`--trace`) is unusable (exit 2).
    case outputPath(OutputPathError)
    /// Another process holds the hardware (exit 1).
    case locked(HardwareLockError)
    /// The output or another part could not start (exit 1).
    case partStart(PartStartFailure)

    public var description: String {
        switch self {
        case .outputPath(let e): e.description
        case .locked(let e): e.description
        case .partStart(let failure): failure.description
        }
    }

    /// The exit code the command line uses: 2 for a usage error, 1 otherwise.
    public var exitCode: Int32 {
        if case .outputPath = self { return 2 }
        return 1
    }
}

/// What a session did.
public struct SessionSummary: Sendable {
    public var loop: LoopResult
    public var stepsReady: Int
    public var end: SessionEnd
    public var limiterInterventions: Int
    /// Closing the trace failed (rows may be missing).
    public var traceError: String?
    /// What the parts should tell a person after the run (the trigger's closing warning).
    public var warnings: [String] = []

    public var stoppedBySignal: Bool { if case .signal = end { true } else { false } }

    /// What went wrong, a line each, for every command to print the same way: a trace that
    /// failed, a failed write to stdout/stderr, the loop's fault when it ended the run.
    public var problems: [String] {
        var lines: [String] = []
        if let traceError { lines.append(traceError) }
        if case .streamFailed(let failure) = end, !failure.isBrokenPipe { lines.append("\(failure); stopped") }
        if let fault = loop.fault, exitCode != 0 { lines.append("\(fault)") }
        return lines
    }

    /// 0: the run ended normally, by a stop request or a signal (a broken pipe counts as
    /// SIGPIPE), an abort by a second signal included. 1: a loop fault, a trace that
    /// failed, or a failed write to stdout/stderr.
    public var exitCode: Int32 {
        if case .streamFailed(let failure) = end, !failure.isBrokenPipe { return 1 }
        if let fault = loop.fault {
            if fault == .aborted, end != .finished { return 0 }
            return 1
        }
        return traceError == nil ? 0 : 1
    }
}

/// The one session runner of `rig play`, `rig jog`, `rig serve` and `rig serve dfmoco`:
/// runs one motion source on one output from start to safe state, with the run's parts
/// around it (the camera, the parts the caller adds, the step trigger: `SessionPart`).
/// In order: checks the trace path, takes one hardware lock for everything every part
/// declares, opens the trace, traps the signals, starts the output, makes the loop, starts
/// the parts, runs the loop while relaying its events to the parts and the log, and saves
/// the output's remembered pose every `persistIntervalSeconds`. On every way out (the end,
/// a stop request, a signal, a failed write to stdout/stderr, a fault, a failure to start)
/// the output ends in its safe state, and every part is finished once, in reverse order,
/// with one `SessionOutcome`, before the locks go.
///
/// `run()` blocks; it may run on any thread. The session's `mailbox` is the only way into
/// the loop from other threads (before, during or after `run()`); `requestShutdown()` and
/// `status` may be called from any thread.
public final class RigSession<Source: MotionSource>: @unchecked Sendable {
    public let rig: Rig
    /// Moved into the loop when it is made (not copied: a second reference to its arrays
    /// would make the loop thread's first write to each one allocate a copy).
    private var source: Source?
    private let output: Output
    private let startPose: [Double]
    /// In start order: the camera, the caller's parts, the trigger.
    private let parts: [any SessionPart]
    private let trigger: StepTrigger?
    /// The one way in to the loop from other threads (motion commands, program requests,
    /// the trigger's controls, stop): usable before `run()`, kept by the loop it makes.
    public let mailbox: SourceMailbox
    private let options: SessionOptions
    private let logger: Logger
    private let clock: LoopClock

    private struct Shared {
        var loop: ControlLoop<Source>?
        var end: SessionEnd?
        var abort = false
    }

    private let shared = Mutex(Shared())

    /// - Parameters:
    ///   - trigger: advances a stepped program (started last, stopped first).
    ///   - camera: the run's camera, if it fires one: locked, started first and closed last.
    ///   - parts: the caller's parts (a shot runner, a server), started in order between the
    ///     camera and the trigger.
    public init(
        rig: Rig, source: Source, output: Output, startPose: [Double], trigger: StepTrigger? = nil, camera: Camera? = nil,
        parts: [any SessionPart] = [], options: SessionOptions, logger: Logger, clock: LoopClock = MonotonicClock(),
        mailbox: SourceMailbox = SourceMailbox()
    ) {
        self.mailbox = mailbox
        self.rig = rig
        self.source = source
        self.output = output
        self.startPose = startPose
        self.trigger = trigger
        self.parts = (camera.map { [CameraPart($0)] } ?? []) + parts + (trigger.map { [TriggerPart($0)] } ?? [])
        self.options = options
        self.logger = logger
        self.clock = clock
    }

    /// Asks for the session's shutdown: brake within the limits, park, then the outputs'
    /// safe state (servos released), and the session ends. (The phone's STOP only brakes and
    /// parks: `ProgramRequest.stop`.) Any thread; before the loop runs it stops the loop at its
    /// first tick.
    public func requestShutdown() { stop(.stopRequested) }

    /// The loop's live status; nil before it starts.
    public var status: LoopStatus? { shared.withLock { $0.loop }?.status }

    /// The first stop of any kind brakes and parks. A person's signal (not SIGPIPE) after
    /// that goes to the safe state at once, like a second Ctrl-C; a broken stream or pipe
    /// never does, however many writes fail. Through the mailbox: the loop takes it at its
    /// next tick, or its first.
    private func stop(_ reason: SessionEnd) {
        var escalates = false
        if case .signal(let signo) = reason, signo != SIGPIPE { escalates = true }
        let (first, abort): (Bool, Bool) = shared.withLock { s in
            let first = s.end == nil
            if first { s.end = reason }
            if escalates, !first { s.abort = true }
            return (first, s.abort)
        }
        if first {
            mailbox.requestShutdown()
            // A signal names itself; a request (a server's STOP, a stop button, a command
            // ending its session) needs no name.
            let what =
                reason == .stopRequested
                ? "stop requested: braking, then park and safe state (Ctrl-C: safe state at once)"
                : "stop requested (\(reason)): braking, then park and safe state (a second signal: safe state at once)"
            logger.notice("\(what)")
        } else if abort {
            mailbox.requestAbort()
        }
    }

    /// What measures a measured settle (`Rig.settle`), if anything does: the simulator's
    /// payload (`"sim"`, and an `"imu"` rig played on `--output sim`), the camera's IMU or
    /// live view (the caller's `options.stillness`). Without one the player waits each
    /// step's timeout and falls back to the fixed settle (the shot log says so).
    private func stillnessProbe() -> (probe: StillnessProbe, settle: MeasuredSettle)? {
        guard let settle = rig.settle else { return nil }
        switch settle.sensor {
        case .sim: return (output as? StillnessProbe).map { ($0, settle) }
        case .liveView: return options.stillness.map { ($0, settle) }
        case .imu: return (options.stillness ?? output as? StillnessProbe).map { ($0, settle) }
        }
    }

    public func run() throws(SessionError) -> SessionSummary {
        var locks: HardwareLock?
        // Released last: the parts (the camera's lines) are finished first.
        defer { locks?.release() }
        let result: Result<SessionSummary, SessionError>
        do throws(SessionError) {
            // Everything that can be refused is refused before anything moves, and before the
            // trace is created: a second process on locked hardware must not clobber the first's trace.
            if let path = options.tracePath {
                do { try OutputPath.check(path, option: "--trace", inputs: options.inputPaths) } catch { throw .outputPath(error) }
            }
            do { locks = try HardwareLock.acquire(output.exclusiveResources + parts.flatMap(\.exclusiveResources)) } catch {
                throw .locked(error)
            }
            result = .success(try runLoop())
        } catch {
            result = .failure(error)
        }
        let outcome: SessionOutcome
        switch result {
        case .success(let summary): outcome = .ran(summary)
        case .failure(let error): outcome = .refused(error)
        }
        for part in parts.reversed() { part.finish(outcome) }
        return try result.get()
    }

    /// From the trace to the loop's end: the output is in its safe state when this returns
    /// or throws.
    private func runLoop() throws(SessionError) -> SessionSummary {
        // The source is moved into the loop, not copied (see `source`).
        var taken: Source? = nil
        swap(&taken, &source)
        guard let source = consume taken else {
            throw .partStart(PartStartFailure(part: "session", cause: .refused, detail: "a session runs once; make a new one"))
        }
        let trace = try openTrace()
        let trap =
            options.trapSignals
            ? SignalTrap(stop: { [self] signo in stop(.signal(signo)) }, abort: { [self] signo in stop(.signal(signo)) })
            : nil
        defer { trap?.cancel() }
        if options.stopOnStreamFailure {
            StandardStreams.onFailure { [self] failure in stop(.streamFailed(failure)) }
        }
        defer { if options.stopOnStreamFailure { StandardStreams.onFailure(nil) } }
        // The settle's sensor first: it measures its offset while nothing moves, and one
        // that does not answer refuses the run before the output starts.
        let stillness = stillnessProbe()
        if let stillness {
            do throws(PartStartFailure) {
                if let said = try stillness.probe.startMeasuring() { logger.info("\(said)") }
            } catch {
                try? trace?.close()
                throw .partStart(error)
            }
        }
        defer { stillness?.probe.stopMeasuring() }
        do {
            try output.start(channels: rig.axes.map(OutputChannel.init), initial: rig.axes.indices.map { rig.axes[$0].command(forPosition: startPose[$0]) })
        } catch {
            try? trace?.close()
            throw .partStart(PartStartFailure(part: "output", error: error))
        }
        let loop = ControlLoop(
            rig: rig, source: consume source, output: output, clock: clock, options: options.loop, trace: trace, startPose: startPose, mailbox: mailbox,
            stillness: stillness, rates: options.rates)
        shared.withLock { $0.loop = loop }
        let door = SessionDoor(
            mailbox: mailbox, stop: { [self] in requestShutdown() }, stepCount: loop.status.progress.stepCount ?? 0,
            pose: { [weak loop] in loop?.status.positions },
            cameraPose: { [weak loop, sim = output as? SimOutput] in sim?.modelledCameraPose ?? (loop?.status.positions).map { CameraPose($0) } }
        )
        for part in parts {
            do throws(PartStartFailure) { try part.start(door) } catch {
                // A part that cannot start after the output did: the loop's own way out puts
                // the output in its safe state, then the session says which part failed.
                mailbox.requestAbort()
                _ = loop.run()
                try? trace?.close()
                throw .partStart(error)
            }
        }
        loop.start()
        var pump = EventPump(session: self, loop: loop)
        let result = pump.run()
        if let view = options.liveView {
            view.render(loop.status, outputStatus: output.statusLine)
            view.finish()
        }
        if options.loop.speed > 1, result.stalls > 0 {
            logger.notice(
                "--speed \(format(options.loop.speed)): the machine could not keep up \(result.stalls) time\(result.stalls == 1 ? "" : "s") (\(result.missedTicks) ticks); each time the timeline waited, so the run took longer than asked, with the same frames, shots and log"
            )
        }
        var traceError: String?
        do { try trace?.close() } catch { traceError = "writing the trace failed: \(error)" }
        return SessionSummary(
            loop: result, stepsReady: pump.stepsReady, end: shared.withLock { $0.end } ?? .finished,
            limiterInterventions: pump.interventions, traceError: traceError, warnings: trigger?.closingWarning.map { [$0] } ?? [])
    }

    private func openTrace() throws(SessionError) -> TraceWriter? {
        guard let path = options.tracePath else { return nil }
        do {
            return try TraceWriter(path: path, axes: options.traceAxes ?? rig.axes, pwmPeriodMicroseconds: output.pwmPeriodMicroseconds)
        } catch let error as OutputPathError {
            throw .outputPath(error)
        } catch {
            throw .outputPath(OutputPathError(option: "--trace", path: path, problem: "\(error)"))
        }
    }

    /// The session's event thread while the loop runs: relays the loop's events to the
    /// parts and the log, refreshes the live view and the output's text display, and saves
    /// the output's remembered pose.
    private struct EventPump {
        let session: RigSession
        let loop: ControlLoop<Source>
        var stepsReady = 0
        var verdicts = SettleVerdicts()
        var interventions = 0
        /// The step count for the log's "step k/N": the program's, as the loop reports it.
        var stepCount: Int

        init(session: RigSession, loop: ControlLoop<Source>) {
            self.session = session
            self.loop = loop
            stepCount = loop.status.progress.stepCount ?? 0
        }

        mutating func run() -> LoopResult {
            let options = session.options
            let viewNanoseconds = UInt64(min(max(options.viewIntervalSeconds, 0.01), 10) * 1e9)
            let persistNanoseconds = UInt64(min(max(options.persistIntervalSeconds, 0.01), 60) * 1e9)
            // Housekeeping runs on wall time, whatever clock paces the loop.
            let wall = MonotonicClock()
            var lastRender = wall.now()
            var lastPersist = wall.now()
            // The output's text display shows progress unless the trigger writes to it.
            let display = session.trigger?.drivesTextDisplay == true ? nil : session.output as? TextDisplay
            var feed = TextDisplayFeed()
            while true {
                _ = loop.eventsPushed.wait(timeout: .now() + .nanoseconds(Int(min(viewNanoseconds, persistNanoseconds))))
                drain()
                if let result = loop.wait(timeoutSeconds: 0) {
                    drain()
                    return result
                }
                let now = wall.now()
                if now &- lastRender >= viewNanoseconds {
                    lastRender = now
                    let status = loop.status
                    options.liveView?.render(status, outputStatus: session.output.statusLine)
                    if let display, let lines = feed.update(status.progress, nowSeconds: Double(now) / 1e9) {
                        display.showText(line1: lines.line1, line2: lines.line2)
                    }
                }
                if now &- lastPersist >= persistNanoseconds {
                    lastPersist = now
                    session.output.persistState()
                }
            }
        }

        private mutating func drain() {
            while let event = loop.events.pop() {
                log(event)
                for part in session.parts { part.handle(event) }
            }
            for part in session.parts { part.poll() }
        }

        private mutating func log(_ event: LoopEvent) {
            let logger = session.logger
            switch event {
            case .player(let e, let t):
                if case .ready = e { stepsReady += 1 }
                session.logEvent(e, time: t, stepCount: stepCount, stillEarlier: verdicts.note(e))
            case .host(let done, _):
                // The program's own count (the loop's status may not show it yet).
                if case .started(_, let steps) = done { stepCount = steps }
                if case .refused = done { logger.debug("\(done)") }
            case .limiterIntervened(let axis, let t):
                // Only a program's frame (or any frame, when a bent frame stops the run) is
                // reported: a jog leaning on the limiter is not.
                interventions += 1
                logger.error("limiter had to bend axis \"\(axis)\" at t=\(rounded(t))s: the program stops")
            case .outputFault(let fault, let t):
                logger.error("output fault at t=\(rounded(t))s: \(fault)")
            case .stalled(let missed, let seconds, let stopped, let t):
                // A rehearsal faster than real time (`--speed`, the simulator) that the machine
                // cannot keep up with falls behind on every tick: said once at the end, not in
                // hundreds of thousands of lines.
                if session.options.loop.speed <= 1 || stopped {
                    let onClock = session.options.loop.sharedTimeline?.report.engaged == true
                    let what =
                        stopped
                        ? "the rig had stood still while moving: stopping from rest"
                        : onClock
                            ? "the timeline paused and catches up with the group's clock within the limits" : "the timeline paused and went on (no catch-up)"
                    logger.warning("the loop stalled \(rounded(seconds)) s at t=\(rounded(t))s (\(missed) ticks missed): \(what)")
                }
            }
        }
    }

    /// `stillEarlier`: the step was measured still this many seconds after its move, then
    /// moved again (this `.settled` is its next verdict: `SettleVerdicts`).
    private func logEvent(_ event: PlayerEvent, time: Double, stepCount: Int, stillEarlier: Double? = nil) {
        let t = "t=\(fixed(time, 2))s"
        let line: String
        switch event {
        case .moveStarted(let step): line = "\(t) move to step \(step + 1)/\(stepCount)"
        case .ready(let step): line = "\(t) step \(step + 1)/\(stepCount) settled"
        case .homeMoveStarted: line = "\(t) move to the home pose"
        case .readyAtHome(let after): line = "\(t) settled at home (next: step \(after + 2)/\(stepCount))"
        case .readyToStart: line = "\(t) at the first key: the path starts at the group's time"
        case .readyToRejoin(let tick): line = "\(t) at the path's pose at \(fixed(Double(tick) * rig.tickSeconds, 2)) s: it goes on from there with the group"
        case .programEnded(let stopped): line = "\(t) program \(stopped ? "stopped" : "ended")"
        case .finished: line = "\(t) finished"
        case .settled(let step, let seconds, let measured):
            let again = stillEarlier.map { " (it moved again after it was measured still at \(fixed($0, 2)) s)" } ?? ""
            line =
                measured
                ? "\(t) step \(step + 1)/\(stepCount) measured still \(fixed(seconds, 2)) s after the move\(again)"
                : "\(t) step \(step + 1)/\(stepCount) not measured still: fixed settle, \(fixed(seconds, 2)) s after the move\(again)"
        case .shot: return  // the shot runner logs shots
        }
        if let view = options.liveView { view.log(line) } else { logger.info("\(line)") }
    }
}

/// A measured settle's verdicts as the log tells them: a step seen moving again after it
/// was measured still is measured on, and its next verdict says so (not a second,
/// contradicting, first one: "measured still 4.92 s", then "not measured still: fixed
/// settle, 5.00 s").
struct SettleVerdicts {
    /// The step last measured still and when (after its move), until the rig moves on.
    private var stillSaid: (step: Int, seconds: Double)?

    /// Takes the player's next event; for a `.settled` of a step measured still before
    /// (and not left since), the seconds of that earlier verdict.
    mutating func note(_ event: PlayerEvent) -> Double? {
        switch event {
        case .settled(let step, let seconds, let measured):
            let earlier = stillSaid.flatMap { $0.step == step ? $0.seconds : nil }
            stillSaid = measured ? (step, seconds) : nil
            return earlier
        case .moveStarted, .homeMoveStarted:
            stillSaid = nil
            return nil
        default:
            return nil
        }
    }
}
