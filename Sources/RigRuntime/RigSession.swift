import Foundation
import Logging
import RigCore

/// How a session runs.
public struct SessionOptions {
    public var loop = LoopOptions()
    /// `--trace FILE.csv`, if any.
    public var tracePath: String?
    public var liveView: LiveView?
    /// Refresh period of the live view.
    public var viewIntervalSeconds = 0.1

    public init(loop: LoopOptions = LoopOptions(), tracePath: String? = nil, liveView: LiveView? = nil) {
        self.loop = loop
        self.tracePath = tracePath
        self.liveView = liveView
    }
}

/// What a session did.
public struct SessionSummary: Sendable {
    public var loop: LoopResult
    public var stepsReady: Int
    public var stoppedBySignal: Bool
    public var limiterInterventions: Int
}

/// Runs one motion source on one output from start to safe state: opens the output,
/// starts the trace, the trigger and the loop, relays events, and on every way out
/// (the end, Ctrl-C, SIGTERM, a fault) leaves the output in its safe state.
public final class RigSession<Source: MotionSource> {
    public let rig: Rig
    private let source: Source
    private let output: Output
    private let startPose: [Double]
    private let trigger: StepTrigger?
    private let options: SessionOptions
    private let logger: Logger
    private let clock: LoopClock
    /// Called on the event thread for every loop event (step sync hooks, tests).
    public var onEvent: ((LoopEvent) -> Void)?
    /// Called once the loop runs, with a way to ask for a stop (jog wires its inputs here).
    public var onStart: ((ControlLoop<Source>) -> Void)?

    public init(rig: Rig, source: Source, output: Output, startPose: [Double], trigger: StepTrigger?,
                options: SessionOptions, logger: Logger, clock: LoopClock = MonotonicClock()) {
        self.rig = rig
        self.source = source
        self.output = output
        self.startPose = startPose
        self.trigger = trigger
        self.options = options
        self.logger = logger
        self.clock = clock
    }

    public func run() throws -> SessionSummary {
        let channels = rig.axes.map(OutputChannel.init)
        let initial = rig.axes.indices.map { rig.axes[$0].command(forPosition: startPose[$0]) }
        try output.start(channels: channels, initial: initial)

        let trace: TraceWriter?
        do {
            trace = try options.tracePath.map {
                try TraceWriter(path: $0, axes: rig.axes, pwmPeriodMicroseconds: output.pwmPeriodMicroseconds)
            }
        } catch {
            output.shutdown(safe: rig.axes.indices.map { rig.axes[$0].safeCommand(lastPosition: startPose[$0]) })
            throw error
        }

        let loop = ControlLoop(rig: rig, source: source, output: output, clock: clock, options: options.loop,
                               trace: trace, startPose: startPose)
        let stopFlag = OneWayFlag()
        let view = options.liveView
        let trap = SignalTrap(stop: { [logger] in
            stopFlag.set()
            loop.requestStop()
            logger.notice("stop requested: braking, then park and safe state (Ctrl-C again: safe state at once)")
        }, abort: {
            loop.requestAbort()
        })
        defer { trap.cancel() }

        do {
            try trigger?.start(advance: { loop.requestAdvance() })
        } catch {
            loop.requestAbort()
            _ = loop.run()
            try? trace?.close()
            throw error
        }
        loop.start()
        onStart?(loop)

        let stepCount: Int = {
            if case .stepped(let steps) = (source as? Player)?.motion { return steps.count }
            return 0
        }()
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
                    interventions += 1
                    if options.loop.stopWhenLimited {
                        logger.error("limiter had to bend axis \"\(axis)\" at t=\(rounded(t))s: stopping")
                    }
                case .outputFault(let message, let t):
                    logger.error("output fault at t=\(rounded(t))s: \(message)")
                }
                onEvent?(event)
            }
        }
        var result: LoopResult?
        var lastRender = DispatchTime.now()
        var lastPersist = DispatchTime.now()
        while result == nil {
            _ = loop.eventsPushed.wait(timeout: .now() + options.viewIntervalSeconds)
            drain()
            result = loop.wait(timeoutSeconds: 0)
            let now = DispatchTime.now()
            if result == nil, now.uptimeNanoseconds - lastRender.uptimeNanoseconds >= UInt64(options.viewIntervalSeconds * 1e9) {
                lastRender = now
                view?.render(loop.status, outputStatus: output.statusLine)
            }
            if now.uptimeNanoseconds - lastPersist.uptimeNanoseconds >= 5_000_000_000 {
                lastPersist = now
                output.persistState()
            }
        }
        drain()
        trigger?.stop()
        if let view {
            view.render(loop.status, outputStatus: output.statusLine)
            view.finish()
        }
        var finalResult = result ?? loop.wait()
        do { try trace?.close() } catch {
            finalResult.fault = finalResult.fault ?? "writing the trace failed: \(error)"
        }
        return SessionSummary(loop: finalResult, stepsReady: stepsReady, stoppedBySignal: stopFlag.isSet,
                              limiterInterventions: interventions)
    }

    private func logEvent(_ event: PlayerEvent, time: Double, stepCount: Int) {
        let t = "t=\(fixed(time, 2))s"
        let line: String?
        switch event {
        case .moveStarted(let step): line = "\(t) move to step \(step + 1)/\(stepCount)"
        case .ready(let step): line = "\(t) step \(step + 1)/\(stepCount) settled"
        case .programEnded(let stopped): line = "\(t) program \(stopped ? "stopped" : "ended")"
        case .finished: line = "\(t) finished"
        case .shot: line = nil  // the shot runner logs shots
        }
        guard let line else { return }
        if let view = options.liveView { view.log(line) } else { logger.info("\(line)") }
    }
}
