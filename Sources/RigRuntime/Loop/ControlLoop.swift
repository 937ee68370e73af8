import Dispatch
import FoundationEssentials
import Glibc
import RigCore
import RigFormat
import Synchronization

/// What the loop reports to the rest of the program (drained off the loop thread).
public enum LoopEvent: Sendable, Equatable {
    case player(PlayerEvent, timeSeconds: Double)
    /// The limiter had to bend a frame: a program that passed `check` never does this.
    case limiterIntervened(axis: String, timeSeconds: Double)
    case outputFault(OutputFault, timeSeconds: Double)
    /// The loop woke `missedTicks` whole ticks late (a stopped process, a paused VM, a
    /// slow disk): the timeline paused for `seconds` of wall time and went on from where
    /// the rig stood, with no backlog. `stopped`: the rig was moving and the stall was
    /// long (`LoopOptions.stallStopSeconds`), so the program was stopped from rest.
    case stalled(missedTicks: Int, seconds: Double, stopped: Bool, timeSeconds: Double)
    /// The program host started a program, refused a request or ended a program.
    case host(HostEvent, timeSeconds: Double)
}

/// A snapshot for the live view, refreshed every tick.
public struct LoopStatus: Sendable {
    public var positions: [Double]
    /// Per axis, per second: the velocity of the last frame sent (0 before the first).
    public var velocities: [Double]
    public var progress: PlaybackProgress
    public var ticks: Int
    public var latenessMaxMicroseconds: Double
    /// With a measured settle: the rig moved and the head has not been measured still since,
    /// within the settle's timeout (DFMoco's `ms` says "moving" meanwhile). False without one.
    public var settling = false
}

/// Why a loop stopped before its source finished normally.
public enum LoopFault: Error, Sendable, Equatable, CustomStringConvertible {
    /// `requestAbort()` (a second signal): straight to the safe state, no braking.
    case aborted
    /// The limiter had to bend a frame of a program (`LoopOptions.stopWhenLimited`): the
    /// program was braked, parked and stopped.
    case limited(axis: String, timeSeconds: Double)
    /// The output failed; the rig went to the safe state from where it was.
    case output(OutputFault, timeSeconds: Double)
    /// The loop thread never ran (a caller waited on a loop that was not started).
    case notRun
    /// The loop stalled for `seconds` while the rig moved: the rig stood still that long,
    /// so the program was stopped from rest (parked within the limits).
    case stalled(seconds: Double, timeSeconds: Double)

    public var description: String {
        switch self {
        case .aborted: "aborted: safe state at once"
        case .limited(let axis, let t): "the limiter had to bend axis \"\(axis)\" at t=\(rounded(t))s; stopped"
        case .output(let fault, let t): "output fault at t=\(rounded(t))s: \(fault)"
        case .notRun: "the control loop did not run"
        case .stalled(let seconds, let t):
            "the control loop stalled for \(rounded(seconds)) s at t=\(rounded(t))s while the rig moved; stopped from rest and parked"
        }
    }
}

/// How a loop run ended.
public struct LoopResult: Sendable {
    public var ticks: Int
    public var lateness: LatencyStats
    public var cpuNanosecondsPerTick: Double
    public var grant: RealtimeGrant
    public var finalPose: [Double]
    /// Why the loop stopped early, if it did.
    public var fault: LoopFault?
    public var traceRowsDropped: Int
    /// Page faults the loop thread took after its first tick (the first tick faults in the
    /// code and data of the common path; any later fault is a page first needed mid-run).
    public var pageFaultsAfterFirstTick = PageFaults(minor: 0, major: 0)
    /// Whole ticks the loop woke too late for, and how many times (each stall paused the
    /// timeline; none was made up in a burst).
    public var missedTicks = 0
    public var stalls = 0
}

/// Settings of one loop run.
public struct LoopOptions: Sendable {
    /// Run the timeline this many times faster than real time (simulator only).
    public var speed: Double = 1
    /// Ask for SCHED_FIFO, mlockall and minimal timer slack on the loop thread.
    public var realtime = true
    /// A program the limiter must bend is stopped (true); a jog session relies on the
    /// limiter and keeps going (false).
    public var stopWhenLimited = true
    /// A stall this long (wall seconds) while the rig moves stops the program from rest:
    /// the rig stood still through it, and going on at the program's speed would be a
    /// step in velocity no acceleration limit allows. A shorter one pauses the timeline
    /// and goes on (the servo has not come to rest yet).
    public var stallStopSeconds = 0.5
    /// A group's keyframes path: once engaged, the timeline stays on the group's clock
    /// (caught up after a stall, held and resumed with the group); nil alone.
    public var sharedTimeline: SharedTimeline?

    public init(
        speed: Double = 1, realtime: Bool = true, stopWhenLimited: Bool = true, stallStopSeconds: Double = 0.5,
        sharedTimeline: SharedTimeline? = nil
    ) {
        self.speed = speed
        self.realtime = realtime
        self.stopWhenLimited = stopWhenLimited
        self.stallStopSeconds = stallStopSeconds
        self.sharedTimeline = sharedTimeline
    }
}

/// The real-time control loop: on its own thread it sleeps to absolute deadlines, asks
/// the motion source for the next pose, guards it with the limiter, and hands it to the
/// output. It owns the output from `start` to `shutdown`: every way out — the end, a
/// stop request, an output fault — ends in `Output.shutdown(safe:)`.
public final class ControlLoop<Source: MotionSource>: @unchecked Sendable {
    public let rig: Rig
    public let events = SPSCRing<LoopEvent>(capacity: 4096)
    /// Signalled after events are pushed, so the event thread wakes at once.
    public let eventsPushed = DispatchSemaphore(value: 0)
    private let output: Output
    private let clock: LoopClock
    private let options: LoopOptions
    private let trace: TraceWriter?
    private let startPose: [Double]
    /// A measured settle's probe and its verdict (`MeasuredSettle`): read after every
    /// write, its verdict handed to the source.
    private let stillnessProbe: StillnessProbe?
    private var stillness: StillnessDetector
    /// The measured settle's timeout, and the time since the loop last commanded motion
    /// (infinite before any) and whether the head was measured still since: `status.settling`.
    private let settleTimeoutSeconds: Double
    private var sinceMotionSeconds = Double.infinity
    private var stillSinceMotion = true
    /// `rig calibrate resonance`'s sensor, read after every write.
    private let rateRecorder: RateRecorder?
    // Only the loop thread touches these while it runs.
    private var source: Source
    private var positions: [Double]
    private var commands: [ChannelCommand]
    private var sent: [Double]
    private var limiter: MotionLimiter
    /// The source's last two frames: after a stall the loop plays between them (see `run`).
    private var sourcePrevious: [Double]
    private var sourceNext: [Double]

    /// The one way in from other threads: requests for the source, stop and abort.
    public let mailbox: SourceMailbox
    /// The loop thread's buffer for delivering the mailbox (no allocation per tick).
    private var delivered: [SourceRequest]
    private let statusLock: Mutex<LoopStatus>
    private let resultLock = Mutex<LoopResult?>(nil)
    private let finished = DispatchSemaphore(value: 0)

    public init(
        rig: Rig, source: Source, output: Output, clock: LoopClock = MonotonicClock(),
        options: LoopOptions = LoopOptions(), trace: TraceWriter? = nil, startPose: [Double], mailbox: SourceMailbox = SourceMailbox(),
        stillness: (probe: StillnessProbe, settle: MeasuredSettle)? = nil, rates: RateRecorder? = nil
    ) {
        self.rig = rig
        rateRecorder = rates
        stillnessProbe = stillness?.probe
        self.stillness = StillnessDetector(
            stillness?.settle ?? MeasuredSettle(sensor: .sim), rig: rig, pwmPeriodSeconds: output.pwmPeriodMicroseconds / 1_000_000)
        settleTimeoutSeconds = stillness?.settle.timeoutSeconds ?? 0
        self.mailbox = mailbox
        delivered = SourceMailbox.buffer(capacity: mailbox.capacity)
        self.source = source
        self.output = output
        self.clock = clock
        self.options = options
        self.trace = trace
        self.startPose = startPose
        // Storage of their own (`map`, not shared with `startPose`), so the first tick's
        // writes to them do not copy on write.
        positions = startPose.map { $0 }
        commands = rig.axes.indices.map { rig.axes[$0].command(forPosition: startPose[$0]) }
        sent = [Double](repeating: .nan, count: rig.axes.count)
        limiter = MotionLimiter(axes: rig.axes, tickSeconds: rig.tickSeconds, startPose: startPose)
        sourcePrevious = startPose.map { $0 }
        sourceNext = startPose.map { $0 }
        statusLock = Mutex(
            LoopStatus(
                positions: startPose.map { $0 }, velocities: [Double](repeating: 0, count: rig.axes.count), progress: source.progress, ticks: 0,
                latenessMaxMicroseconds: 0))
    }

    // Requests from other threads (the trigger, the camera, a stop) go through `mailbox`,
    // the one door into the loop.

    public var status: LoopStatus { statusLock.withLock { $0 } }

    // MARK: Running

    /// Starts the loop on its own thread. `output.start` must have succeeded.
    public func start() {
        SystemThread.start(name: "rig-loop", stackSize: 1 << 20) { [self] in
            let result = run()
            resultLock.withLock { $0 = result }
            finished.signal()
        }
    }

    /// Waits for a loop started with `start()` to end.
    public func wait() -> LoopResult {
        finished.wait()
        finished.signal()
        return resultLock.withLock { $0 }
            ?? LoopResult(
                ticks: 0, lateness: LatencyStats(), cpuNanosecondsPerTick: 0,
                grant: RealtimeGrant(), finalPose: startPose, fault: .notRun, traceRowsDropped: 0)
    }

    /// Waits up to `seconds` for a loop started with `start()` to end.
    public func wait(timeoutSeconds seconds: Double) -> LoopResult? {
        guard finished.wait(timeout: .now() + seconds) == .success else { return nil }
        finished.signal()
        return wait()
    }

    /// Runs the loop on the calling thread until the source finishes or a fault stops it,
    /// then puts the output in its safe state.
    public func run() -> LoopResult {
        let grant = options.realtime ? RealtimeSetup.apply() : RealtimeGrant()
        var stats = LatencyStats()
        let periodNanoseconds = UInt64((1e9 / rig.loopRateHz / max(options.speed, 1e-3)).rounded())
        let dt = rig.tickSeconds
        var fault: LoopFault?
        var stopApplied = false
        var tick = 0
        let cpuStart = threadCPUNanoseconds()
        var faultsAfterFirstTick: PageFaults?
        let startTime = clock.now()
        // Deadlines are anchor + k·period; a stall moves the anchor to the late wake-up,
        // so missed ticks are never emitted back to back (limits hold in wall time).
        var anchor = startTime
        var sinceAnchor: UInt64 = 0
        var missedTicks = 0
        var stalls = 0
        let stallStopNanoseconds = UInt64(max(options.stallStopSeconds, 0) * 1e9)
        var lastWoke = startTime
        // The timeline's pace (see `ResumeRamp`): 1 except after a stall, when the loop
        // plays between the source's frames and speeds up within the limits.
        var ramp = ResumeRamp(axes: rig.axes, tickSeconds: dt)
        // In real time a stall passes for the servos and the payload too; a rehearsal faster
        // than real time (`--speed`, the simulator) drives no servo and only pauses its
        // timeline.
        let realTime = options.speed <= 1
        // A group's keyframes path: on the group's clock from its start (`engage`) to its
        // end (the program ended, or a stop: braking and parking play at their own pace).
        // A host that plays paths one after another (`rig serve`) arms the timeline again
        // for each: a new generation is a new path, its peaks taken when it engages. A path
        // this loop left (its end, a stop) is not engaged again.
        let shared = realTime ? options.sharedTimeline : nil
        var onSharedClock = false
        var sharedGeneration = 0
        var leftGeneration: Int?
        var sharedPeaks: PathPeaks?
        // A planned move's coming pulses for an output that trims its counts (`CountTrim`):
        // the source's frames ahead and their pulses, sized here (no allocation per tick).
        let aheadWindow = output.looksAhead ? CountTrim.aheadTicks : 0
        var aheadRows = [Double](repeating: 0, count: aheadWindow * rig.axes.count)
        var aheadPulses = [Double](repeating: .nan, count: aheadWindow * rig.axes.count)

        while !source.isFinished || ramp.phase < 1 {
            let deadline = anchor + (sinceAnchor + 1) * periodNanoseconds
            clock.sleep(until: deadline)
            let woke = clock.now()
            let late = woke > deadline ? woke - deadline : 0
            stats.record(latenessNanoseconds: late, periodNanoseconds: periodNanoseconds)
            // This frame reaches the output `sinceLast` after the previous one: a stall
            // slows the rig to period / sinceLast of its speed, whatever comes next.
            let sinceLast = woke &- lastWoke
            lastWoke = woke
            var stall: LoopEvent?
            var slowedTo = 1.0
            if late >= periodNanoseconds {
                // In real time the rig goes on from the speed it had over the gap, and the
                // output's model (if any) catches up with the ticks it got no frame for.
                if realTime { slowedTo = Double(periodNanoseconds) / Double(max(sinceLast, periodNanoseconds)) }
                let missed = Int(late / periodNanoseconds)
                missedTicks += missed
                if realTime { output.elapsedWithoutWrites(ticks: missed) }
                stalls += 1
                anchor = woke
                sinceAnchor = 0
                // Moving faster than the axis could start from rest in one tick: the rig
                // stood still through the stall, so going on would be a velocity step.
                let moving = rig.axes.indices.contains { abs(limiter.velocities[$0]) > rig.axes[$0].maxAcceleration * dt * 1.000001 }
                let stop = moving && late >= stallStopNanoseconds
                if stop {
                    limiter.rest()
                    if source.stallStop(), !stopApplied {
                        fault = fault ?? .stalled(seconds: Double(late) / 1e9, timeSeconds: Double(tick) * dt)
                        stopApplied = true
                    }
                }
                stall = .stalled(missedTicks: missed, seconds: Double(late) / 1e9, stopped: stop, timeSeconds: Double(tick) * dt)
            } else {
                sinceAnchor += 1
            }

            // A stop first (the source then ignores what would move it), then what was
            // posted, oldest first.
            // On a shared clock above its own pace, a stop waits until the timeline is back at
            // it (braked on the path within the limits, a few ticks): the source's own
            // braking, played faster, would brake harder than the axis may.
            let deferStop = onSharedClock && ramp.rate > 1
            let asked = mailbox.deliver(to: &source, buffer: &delivered, stopFirst: !stopApplied && !deferStop)
            if asked.abort {
                fault = fault ?? .aborted
                break
            }
            if asked.stop, !deferStop { stopApplied = true }
            let stopWaits = asked.stop && deferStop
            if let shared {
                if onSharedClock {
                    if stopApplied || Self.leavesThePath(source.progress.phase) {
                        // Stopped (braking, parking: at their own pace).
                        onSharedClock = false
                        leftGeneration = sharedGeneration
                    }
                } else if !stopApplied, source.progress.phase == .playing, let path = shared.engagedPath, path.generation != leftGeneration {
                    // The path started this tick (its first frame is the next one taken).
                    onSharedClock = true
                    sharedGeneration = path.generation
                    sharedPeaks = path.peaks
                    if let tick = path.restingAtTick {
                        // Rejoined part-way: the source rests at that frame; the timeline ramps in.
                        ramp.startPath(restingAtFrame: tick)
                    } else {
                        ramp.startPath()
                    }
                }
            }

            // The source's timeline advances `ramp.rate` ticks per tick (on a shared clock
            // up to twice); between its frames the loop interpolates (at rate 1, the
            // source's frame as it is).
            tick += 1
            let time = Double(tick) * dt
            let wall = Double(woke &- startTime) / 1e9
            var pushed = false
            if let stall {
                events.push(stall)
                pushed = true
            }
            // What this tick's requests did first: a program taken (`started`, with its step
            // count) comes before its first frame's events.
            while let done = source.takeHostEvent() {
                events.push(.host(done, timeSeconds: time))
                pushed = true
            }
            var sourceLimited: Int?
            ramp.move()
            var reference = (path: 0.0, rate: 1.0, holdHere: false)
            if onSharedClock, let shared {
                reference = shared.reference(atNs: woke, periodNs: periodNanoseconds)
                ramp.compare(referenceTicks: reference.path / dt)
            }
            var framesTaken = 0
            var moveStarted = false
            while ramp.takeFrame(sourceFinished: source.isFinished) {
                swap(&sourcePrevious, &sourceNext)
                framesTaken += 1
                if let event = source.tick(into: &sourceNext) {
                    events.push(.player(event, timeSeconds: time))
                    pushed = true
                    switch event {
                    case .moveStarted, .homeMoveStarted: moveStarted = true
                    default: break
                    }
                    // The path ended: the park plays at its own pace.
                    if case .programEnded = event, onSharedClock {
                        onSharedClock = false
                        leftGeneration = sharedGeneration
                    }
                }
                sourceLimited = sourceLimited ?? source.limitedAxis
            }
            ramp.interpolate(from: sourcePrevious, to: sourceNext, into: &positions)
            while let done = source.takeHostEvent() {
                events.push(.host(done, timeSeconds: time))
                pushed = true
            }

            // The source's verdict on a program's frame (its own limiter bent it first),
            // else the loop's limiter, which stays as the last guard: a bent program frame
            // is reported and stops `rig play` either way; a jog that leans on the
            // limiter (`stopWhenLimited` false) is not.
            let loopLimited = limiter.limit(&positions)
            if let limited = sourceLimited ?? (options.stopWhenLimited ? loopLimited : nil) {
                let axis = rig.axes[limited].name
                events.push(.limiterIntervened(axis: axis, timeSeconds: time))
                pushed = true
                if options.stopWhenLimited, !stopApplied {
                    source.stop()
                    stopApplied = true
                    fault = .limited(axis: axis, timeSeconds: time)
                }
            }

            if slowedTo < 1 {
                // The rig did this frame's move over the stall: from here it goes on at
                // the speed it really had, and speeds up again within its limits.
                limiter.scaleVelocities(by: slowedTo)
                ramp.slow(to: slowedTo)
            }
            if onSharedClock, let shared, let sharedPeaks {
                ramp.track(referenceRate: reference.rate, peaks: sharedPeaks, holdHere: reference.holdHere || stopWaits)
                shared.publish(
                    SharedTimeline.Report(
                        lagSeconds: ramp.lag * dt, rate: ramp.rate, referenceRate: reference.rate, pathSeconds: ramp.position * dt,
                        atLimit: ramp.lag * dt > 0.005 && ramp.cap <= 1, engaged: true))
            } else {
                if ramp.rate > 1, let sharedPeaks {
                    // Off the shared clock above its own pace (a stop while catching up; alone
                    // the rate never passes 1): back to 1 within the limits.
                    ramp.forgetLag()
                    ramp.track(referenceRate: 1, peaks: sharedPeaks)
                } else {
                    ramp.speedUp(previous: sourcePrevious, next: sourceNext)
                }
            }

            // A move starts on the source's own timeline (a program's first move starts with
            // its first tick): its coming frames, as pulses.
            var aheadTicks = 0
            if aheadWindow > 0, moveStarted || tick == 1, framesTaken == 1, ramp.rate == 1, !onSharedClock {
                aheadTicks = source.framesAhead(into: &aheadRows, window: aheadWindow)
                OutputLookAhead.pulses(ofFramesAhead: aheadRows, ticks: aheadTicks, window: aheadWindow, axes: rig.axes, into: &aheadPulses)
            }
            for i in rig.axes.indices { commands[i] = rig.axes[i].command(forPosition: positions[i]) }
            do {
                try output.write(commands, sent: &sent)
                if aheadTicks > 0 { output.expect(pulses: aheadPulses, window: aheadWindow, ticks: aheadTicks) }
            } catch {
                events.push(.outputFault(error, timeSeconds: time))
                eventsPushed.signal()
                fault = .output(error, timeSeconds: time)
                break
            }
            if let stillnessProbe {
                var moving = false
                for v in limiter.velocities where v != 0 { moving = true }
                stillnessProbe.commanded(moving: moving)
                // The envelope's window starts after the last count the output sent.
                stillness.commanded(sent: sent, framesMoving: moving)
                stillness.observe(rateDegreesPerSecond: stillnessProbe.rateDegreesPerSecond() ?? .nan, seconds: dt)
                source.measured(still: stillness.isStill)
                if moving {
                    sinceMotionSeconds = 0
                    stillSinceMotion = false
                } else {
                    sinceMotionSeconds += dt
                    if stillness.isStill { stillSinceMotion = true }
                }
            }
            // A ring-down goes on through a stall in real time: its samples carry the ticks
            // missed too (the timeline's `time` paused).
            rateRecorder?.record(timeSeconds: realTime ? Double(tick + missedTicks) * dt : time, positions: positions)
            if let trace {
                for i in rig.axes.indices where !sent[i].isNaN {
                    trace.push(
                        TraceRow(
                            timeSeconds: time, axis: Int32(i), pulseMicroseconds: sent[i], wallSeconds: wall,
                            cameraDegrees: output.modelledCameraAngle(axis: i) ?? .nan))
                }
            }
            if pushed { eventsPushed.signal() }
            if tick == 1 { faultsAfterFirstTick = PageFaults.ofThisThread() }
            statusLock.withLock { status in
                for i in positions.indices {
                    status.positions[i] = positions[i]
                    status.velocities[i] = limiter.velocities[i]
                }
                status.progress = source.progress
                status.ticks = tick
                status.latenessMaxMicroseconds = stats.maxMicroseconds
                status.settling = !stillSinceMotion && sinceMotionSeconds < settleTimeoutSeconds
            }
        }

        eventsPushed.signal()
        let cpu = threadCPUNanoseconds() - cpuStart
        let faults = faultsAfterFirstTick.map { PageFaults.ofThisThread() - $0 } ?? PageFaults(minor: 0, major: 0)
        let safe = rig.axes.indices.map { rig.axes[$0].safeCommand(lastPosition: positions[$0]) }
        output.shutdown(safe: safe)
        return LoopResult(
            ticks: tick, lateness: stats, cpuNanosecondsPerTick: tick > 0 ? Double(cpu) / Double(tick) : 0,
            grant: grant, finalPose: positions, fault: fault, traceRowsDropped: trace?.droppedRows ?? 0,
            pageFaultsAfterFirstTick: faults, missedTicks: missedTicks, stalls: stalls)
    }

    /// A source in this phase has left its path (a stop or the end): off the shared clock.
    static func leavesThePath(_ phase: ProgressPhase) -> Bool {
        switch phase {
        case .braking, .parking, .stopping, .finished, .idle: true
        default: false
        }
    }
}
