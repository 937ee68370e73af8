import Foundation
import Logging
import RigCore
import Synchronization

/// How a session runs.
public struct SessionOptions {
    public var loop = LoopOptions()
    /// `--trace FILE.csv`, if any. Checked and opened before the output starts.
    public var tracePath: String?
    public var liveView: LiveView?
    /// Refresh period of the live view.
    public var viewIntervalSeconds = 0.1
    /// Files the run reads (program, rig): an output path naming one of them is refused.
    public var inputPaths: [String] = []
    /// Handle SIGINT, SIGTERM, SIGHUP, SIGPIPE and SIGQUIT (a command-line run). False when
    /// the caller owns the signals and calls `requestStop()` itself.
    public var trapSignals = true
    /// A failed write to stdout or stderr stops the run (brake, park, safe state).
    public var stopOnStreamFailure = true
    /// How often the output's remembered pose is saved while the rig runs (it writes only
    /// when the pose changed): after a SIGKILL it is at most this much motion old.
    public var persistIntervalSeconds = 0.25

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
    /// `requestStop()` (a server's stop, a GPIO stop button).
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
    /// The output could not start (exit 1).
    case outputStart(String)
    /// The step trigger could not start (exit 1).
    case triggerStart(String)
    /// The camera could not take its hardware (exit 1).
    case cameraStart(String)

    public var description: String {
        switch self {
        case .outputPath(let e): e.description
        case .locked(let e): e.description
        case .outputStart(let m): m
        case .triggerStart(let m): m
        case .cameraStart(let m): "camera: \(m)"
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

/// The one session runner of `rig play`, `rig jog` and `rig serve`: runs one motion source
/// on one output from start to safe state, and owns the run's parts (output, trigger,
/// camera). In order: checks and opens the trace, takes one hardware lock for every part,
/// traps the signals, starts the output, the camera, the trigger (with the program's
/// controls) and the loop, relays events, saves the output's remembered pose every
/// `persistIntervalSeconds`; on every way out (the end, a stop request, a signal, a failed
/// write to stdout/stderr, a fault, a failure to start) the output ends in its safe state,
/// the trigger is stopped and the camera closed, once.
///
/// `run()` blocks; it may run on any thread (a server runs it on a background thread and
/// talks to its source through the session's `mailbox`). `requestStop()` and `status`
/// may be called from any thread, before, during or after `run()`. Set the hooks before
/// calling `run()`.
public final class RigSession<Source: MotionSource>: @unchecked Sendable {
    public let rig: Rig
    private let source: Source
    private let output: Output
    private let startPose: [Double]
    private let trigger: StepTrigger?
    private let camera: Camera?
    /// The one way in to the loop from other threads (motion commands, program requests,
    /// the trigger's controls, stop): usable before `run()`, kept by the loop it makes.
    public let mailbox: SourceMailbox
    private let options: SessionOptions
    private let logger: Logger
    private let clock: LoopClock
    /// Called on the event thread for every loop event (step sync hooks, tests).
    public var onEvent: ((LoopEvent) -> Void)?
    /// Called once the loop runs, with the loop (for requests such as a stop button).
    public var onStart: ((ControlLoop<Source>) -> Void)?
    /// Called on the event thread every time it wakes (at least every `viewIntervalSeconds`),
    /// and once more after the loop ended: a caller's own housekeeping (jog's notices).
    public var onPoll: (() -> Void)?

    private struct Shared {
        var loop: ControlLoop<Source>?
        var end: SessionEnd?
        var abort = false
    }

    private let shared = Mutex(Shared())

    /// - Parameter camera: the run's camera, if it fires one: locked, started and closed by
    ///   the session (a shot runner fires it meanwhile).
    public init(
        rig: Rig, source: Source, output: Output, startPose: [Double], trigger: StepTrigger?, camera: Camera? = nil,
        options: SessionOptions, logger: Logger, clock: LoopClock = MonotonicClock(), mailbox: SourceMailbox = SourceMailbox()
    ) {
        self.mailbox = mailbox
        self.rig = rig
        self.source = source
        self.output = output
        self.startPose = startPose
        self.trigger = trigger
        self.camera = camera
        self.options = options
        self.logger = logger
        self.clock = clock
    }

    /// Asks for a controlled stop: brake within the limits, park, safe state. Any thread;
    /// before the loop runs it stops the loop at its first tick.
    public func requestStop() { stop(.stopRequested) }

    /// The loop's live status; nil before it starts.
    public var status: LoopStatus? { shared.withLock { $0.loop }?.status }

    /// The first stop of any kind brakes and parks. A person's signal (not SIGPIPE) after
    /// that goes to the safe state at once, like a second Ctrl-C; a broken stream or pipe
    /// never does, however many writes fail.
    private func stop(_ reason: SessionEnd) {
        var escalates = false
        if case .signal(let signo) = reason, signo != SIGPIPE { escalates = true }
        let (loop, first, abort): (ControlLoop<Source>?, Bool, Bool) = shared.withLock { s in
            let first = s.end == nil
            if first { s.end = reason }
            if escalates, !first { s.abort = true }
            return (s.loop, first, s.abort)
        }
        if first {
            loop?.requestStop()
            logger.notice("stop requested (\(reason)): braking, then park and safe state (a second signal: safe state at once)")
        } else if abort {
            loop?.requestAbort()
        }
    }

    public func run() throws(SessionError) -> SessionSummary {
        // The camera is the session's: closed once, on every way out (a refusal to start
        // included), before the locks go so its lines are free when they are.
        var cameraClosed = false
        func closeCamera() {
            guard !cameraClosed else { return }
            cameraClosed = true
            camera?.close()
        }
        defer { closeCamera() }
        // Everything that can be refused is refused before anything moves, and before the
        // trace is created: a second process on locked hardware must not clobber the first's trace.
        if let path = options.tracePath {
            do { try OutputPath.check(path, option: "--trace", inputs: options.inputPaths) } catch { throw .outputPath(error) }
        }
        let locks: HardwareLock
        do {
            locks = try HardwareLock.acquire(
                output.exclusiveResources + (trigger?.exclusiveResources ?? []) + (camera?.exclusiveResources ?? []))
        } catch {
            throw .locked(error)
        }
        defer { locks.release() }
        defer { closeCamera() }
        var trace: TraceWriter?
        if let path = options.tracePath {
            do {
                trace = try TraceWriter(path: path, axes: rig.axes, pwmPeriodMicroseconds: output.pwmPeriodMicroseconds)
            } catch let error as OutputPathError {
                throw .outputPath(error)
            } catch {
                throw .outputPath(OutputPathError(option: "--trace", path: path, problem: "\(error)"))
            }
        }

        let trap =
            options.trapSignals
            ? SignalTrap(stop: { [self] signo in stop(.signal(signo)) }, abort: { [self] signo in stop(.signal(signo)) })
            : nil
        defer { trap?.cancel() }
        if options.stopOnStreamFailure {
            StandardStreams.onFailure { [self] failure in stop(.streamFailed(failure)) }
        }
        defer { if options.stopOnStreamFailure { StandardStreams.onFailure(nil) } }

        let channels = rig.axes.map(OutputChannel.init)
        let initial = rig.axes.indices.map { rig.axes[$0].command(forPosition: startPose[$0]) }
        do {
            try output.start(channels: channels, initial: initial)
        } catch {
            try? trace?.close()
            throw .outputStart("\(error)")
        }

        let loop = ControlLoop(
            rig: rig, source: source, output: output, clock: clock, options: options.loop,
            trace: trace, startPose: startPose, mailbox: mailbox)
        let (stoppedBefore, abortedBefore) = shared.withLock { s in
            s.loop = loop
            return (s.end != nil, s.abort)
        }
        if stoppedBefore { loop.requestStop() }
        if abortedBefore { loop.requestAbort() }

        // A part that cannot start after the output did: the loop's own way out puts the
        // output in its safe state, then the session says which part failed.
        func abandon(_ failure: SessionError) -> SessionError {
            loop.requestAbort()
            _ = loop.run()
            try? trace?.close()
            return failure
        }
        do { try camera?.start() } catch { throw abandon(.cameraStart("\(error)")) }
        do {
            try trigger?.start(
                StepControls(
                    advance: { loop.requestAdvance() }, redo: { loop.requestRedo() }, goTo: { loop.requestGoTo(step: $0) },
                    stop: { [self] in requestStop() }, goHome: { loop.requestGoHome() }))
        } catch {
            throw abandon(.triggerStart("\(error)"))
        }
        loop.start()
        onStart?(loop)

        let stepCount = source.progress.stepCount ?? 0
        var stepsReady = 0
        var interventions = 0
        func drain() {
            while let event = loop.events.pop() {
                switch event {
                case .player(let e, let t):
                    if case .ready = e { stepsReady += 1 }
                    trigger?.handle(e, stepCount: stepCount)
                    logEvent(e, time: t, stepCount: stepCount)
                case .limiterIntervened(let axis, let t):
                    // Only a program's frame (or any frame, when a bent frame stops the
                    // run) is reported: a jog leaning on the limiter is not.
                    interventions += 1
                    logger.error("limiter had to bend axis \"\(axis)\" at t=\(rounded(t))s: the program stops")
                case .outputFault(let fault, let t):
                    logger.error("output fault at t=\(rounded(t))s: \(fault)")
                case .stalled(let missed, let seconds, let stopped, let t):
                    // A rehearsal faster than real time (`--speed`, the simulator) that the
                    // machine cannot keep up with falls behind on every tick: said once at
                    // the end, not in hundreds of thousands of lines.
                    if options.loop.speed <= 1 || stopped {
                        let what = stopped ? "the rig had stood still while moving: stopping from rest" : "the timeline paused and went on (no catch-up)"
                        logger.warning("the loop stalled \(rounded(seconds)) s at t=\(rounded(t))s (\(missed) ticks missed): \(what)")
                    }
                }
                onEvent?(event)
            }
            onPoll?()
        }
        var result: LoopResult?
        let viewNanoseconds = UInt64(min(max(options.viewIntervalSeconds, 0.01), 10) * 1e9)
        let persistNanoseconds = UInt64(min(max(options.persistIntervalSeconds, 0.01), 60) * 1e9)
        // Housekeeping runs on wall time, whatever clock paces the loop.
        let wall = MonotonicClock()
        var lastRender = wall.now()
        var lastPersist = wall.now()
        // The output's text display shows progress unless the trigger writes to it.
        let display = trigger?.drivesTextDisplay == true ? nil : output as? TextDisplay
        var feed = TextDisplayFeed()
        while result == nil {
            _ = loop.eventsPushed.wait(timeout: .now() + .nanoseconds(Int(min(viewNanoseconds, persistNanoseconds))))
            drain()
            result = loop.wait(timeoutSeconds: 0)
            let now = wall.now()
            if result == nil, now &- lastRender >= viewNanoseconds {
                lastRender = now
                let status = loop.status
                options.liveView?.render(status, outputStatus: output.statusLine)
                if let display, let lines = feed.update(status.progress, nowSeconds: Double(now) / 1e9) {
                    display.showText(line1: lines.line1, line2: lines.line2)
                }
            }
            if result == nil, now &- lastPersist >= persistNanoseconds {
                lastPersist = now
                output.persistState()
            }
        }
        drain()
        trigger?.stop()
        if let view = options.liveView {
            view.render(loop.status, outputStatus: output.statusLine)
            view.finish()
        }
        let finalResult = result ?? loop.wait()
        if options.loop.speed > 1, finalResult.stalls > 0 {
            logger.notice(
                "--speed \(format(options.loop.speed)): the machine could not keep up \(finalResult.stalls) time\(finalResult.stalls == 1 ? "" : "s") (\(finalResult.missedTicks) ticks); each time the timeline waited, so the run took longer than asked, with the same frames, shots and log"
            )
        }
        var traceError: String?
        do { try trace?.close() } catch {
            traceError = "writing the trace failed: \(error)"
        }
        let end = shared.withLock { $0.end } ?? .finished
        return SessionSummary(
            loop: finalResult, stepsReady: stepsReady, end: end,
            limiterInterventions: interventions, traceError: traceError)
    }

    private func logEvent(_ event: PlayerEvent, time: Double, stepCount: Int) {
        let t = "t=\(fixed(time, 2))s"
        let line: String
        switch event {
        case .moveStarted(let step): line = "\(t) move to step \(step + 1)/\(stepCount)"
        case .ready(let step): line = "\(t) step \(step + 1)/\(stepCount) settled"
        case .homeMoveStarted: line = "\(t) move to the home pose"
        case .readyAtHome(let after): line = "\(t) settled at home (next: step \(after + 2)/\(stepCount))"
        case .programEnded(let stopped): line = "\(t) program \(stopped ? "stopped" : "ended")"
        case .finished: line = "\(t) finished"
        case .shot: return  // the shot runner logs shots
        }
        if let view = options.liveView { view.log(line) } else { logger.info("\(line)") }
    }
}
