import Dispatch
import RigCore
import RigTestSupport
import Testing

@testable import RigRuntime

@Suite struct ControlLoopTests {
    @Test func loopSendsExactlyWhatThePlayerComputes() {
        let rig = testRig()
        let output = RecordingOutput()
        let loop = ControlLoop(
            rig: rig, source: Player(rig: rig, motion: keyframes(rig), startPose: rig.homePose),
            output: output, clock: ManualClock(), options: LoopOptions(realtime: false), startPose: rig.homePose)
        let result = loop.run()

        var reference = Player(rig: rig, motion: keyframes(rig), startPose: rig.homePose)
        var frame = rig.homePose
        var expected: [[Double]] = []
        while !reference.isFinished {
            _ = reference.tick(into: &frame)
            expected.append(frame)
        }
        let writes = output.log.withLock { $0.writes }
        #expect(result.fault == nil)
        #expect(result.ticks == expected.count)
        #expect(writes.count == expected.count)
        for (k, commands) in writes.enumerated() {
            for (i, axis) in rig.axes.enumerated() {
                let position = commands[i].position(on: axis) ?? .nan
                #expect(abs(position - expected[k][i]) < 1e-9, "tick \(k) axis \(axis.name)")
            }
        }
    }

    @Test func everyWayOutEndsInExactlyOneShutdownWithTheSafeState() {
        let rig = testRig()
        let output = RecordingOutput()
        let loop = ControlLoop(
            rig: rig, source: Player(rig: rig, motion: keyframes(rig), startPose: rig.homePose),
            output: output, clock: ManualClock(), options: LoopOptions(realtime: false), startPose: rig.homePose)
        let result = loop.run()
        let shutdowns = output.log.withLock { $0.shutdowns }
        #expect(shutdowns.count == 1)
        // pan holds its park position (10°); the light is released.
        let pan = rig.axes[0]
        #expect(shutdowns.first?[0].position(on: pan).map { abs($0 - 10) < 1e-9 } == true)
        #expect(shutdowns.first?[1] == .off)
        #expect(abs(result.finalPose[0] - 10) < 1e-9)
    }

    @Test func outputFaultStopsTheLoopAndStillShutsDown() {
        let rig = testRig()
        let output = RecordingOutput()
        output.failAtWrite = 50
        let loop = ControlLoop(
            rig: rig, source: Player(rig: rig, motion: keyframes(rig), startPose: rig.homePose),
            output: output, clock: ManualClock(), options: LoopOptions(realtime: false), startPose: rig.homePose)
        let result = loop.run()
        #expect(result.fault == .output(RecordingOutput.busGone, timeSeconds: 0.5))
        #expect(result.ticks == 50)
        #expect(output.log.withLock { $0.shutdowns.count } == 1)
        var sawFault = false
        while let event = loop.events.pop() { if case .outputFault = event { sawFault = true } }
        #expect(sawFault)
    }

    @Test func stopRequestBrakesWithinLimitsThenParks() {
        let rig = testRig()
        let output = RecordingOutput()
        let loop = ControlLoop(
            rig: rig, source: Player(rig: rig, motion: keyframes(rig), startPose: rig.homePose),
            output: output, clock: ManualClock(), options: LoopOptions(realtime: false), startPose: rig.homePose)
        loop.mailbox.requestShutdown()
        let result = loop.run()
        let writes = output.log.withLock { $0.writes }
        var monitor = LimitMonitor(axes: rig.axes, tickSeconds: rig.tickSeconds, startPose: rig.homePose)
        for commands in writes {
            let pose = rig.axes.indices.map { commands[$0].position(on: rig.axes[$0]) ?? 0 }
            #expect(monitor.observe(pose) == nil)
        }
        // Stopped before the path: far fewer ticks than the 5 s program, ending parked.
        #expect(result.ticks < 200)
        #expect(abs(result.finalPose[0] - 10) < 1e-9)
        #expect(result.fault == nil)
    }

    @Test func autoAdvanceWalksEveryStepInOrder() {
        let rig = testRig()
        let steps = [
            Step(pose: [20, 10], settleSeconds: 0.1, label: "a"),
            Step(pose: [-20, 30], settleSeconds: 0, label: "b"),
            Step(pose: [0, 0], settleSeconds: 0.2, label: "c"),
        ]
        // `auto` on the program host, as `rig play` runs it: each step advanced the tick it is ready.
        let program = HostedProgram(name: "p", motion: .stepped(steps), trigger: .auto)
        let loop = ControlLoop(
            rig: rig, source: ProgramHost(rig: rig, startPose: rig.homePose, program: program, endsWithProgram: true),
            output: RecordingOutput(), clock: ManualClock(),
            options: LoopOptions(realtime: false), startPose: rig.homePose)
        _ = loop.run()
        var ready: [Int] = []
        var ended = 0
        while let event = loop.events.pop() {
            if case .player(.ready(let s), _) = event { ready.append(s) }
            if case .player(.programEnded(stopped: false), _) = event { ended += 1 }
        }
        #expect(ready == [0, 1, 2])
        #expect(ended == 1)
    }

    /// 160° in 0.5 s: far beyond maxVelocity, a program the limiter must bend.
    static func tooFast(_ rig: Rig) -> HostedProgram {
        HostedProgram(
            name: "too fast",
            motion: .continuous(
                tracks: [
                    AxisTrack(keys: [Keyframe(time: 0, value: -80, interpolation: .linear), Keyframe(time: 0.5, value: 80)]), nil,
                ], durationSeconds: 0.5),
            trigger: .auto)
    }

    /// `rig play`'s path: the program host plays the program, its command source's limiter
    /// bends the frame first, and its verdict (not a second look at a frame already bent)
    /// stops the program.
    @Test func aProgramThatBreaksALimitIsStoppedByTheLimiter() {
        let rig = testRig()
        let output = RecordingOutput()
        let source = ProgramHost(rig: rig, startPose: [-80, 0], program: Self.tooFast(rig), endsWithProgram: true)
        let loop = ControlLoop(
            rig: rig, source: source, output: output, clock: ManualClock(), options: LoopOptions(realtime: false), startPose: [-80, 0])
        let result = loop.run()
        guard case .limited(let axis, let t) = result.fault else {
            Issue.record("fault: \(String(describing: result.fault))")
            return
        }
        #expect(axis == "pan")
        // Stopped at the first bent frame (the path's first move), not at its end.
        #expect(t < 0.1)
        var limitedEvents = 0
        var hostEvents: [HostEvent] = []
        var firstOfTheProgram: LoopEvent?
        while let event = loop.events.pop() {
            if case .limiterIntervened(axis: "pan", _) = event { limitedEvents += 1 }
            if case .host(let done, _) = event { hostEvents.append(done) }
            switch event {
            case .host, .player: firstOfTheProgram = firstOfTheProgram ?? event
            default: break
            }
        }
        #expect(limitedEvents >= 1)
        // Its start (with its step count: a path has none) before any event of its frames.
        if case .host(.started(_, let steps), _)? = firstOfTheProgram {
            #expect(steps == 0)
        } else {
            Issue.record("the program's first event is \(String(describing: firstOfTheProgram))")
        }
        // The host says how the program ended: stopped by the limiter on pan (axis 0).
        #expect(hostEvents == [.started(program: "too fast", steps: 0), .ended(program: "too fast", .limited(axis: 0))])
        var monitor = LimitMonitor(axes: rig.axes, tickSeconds: rig.tickSeconds, startPose: [-80, 0])
        for commands in output.log.withLock({ $0.writes }) {
            let pose = rig.axes.indices.map { commands[$0].position(on: rig.axes[$0]) ?? 0 }
            #expect(monitor.observe(pose) == nil, "a frame left the limits")
        }
        // It never got near the far end: braked and parked (pan parks at 10°).
        #expect(abs(result.finalPose[0] - 10) < 1e-9)
    }

    /// `rig serve`'s path (the loop does not stop on its own limiter, jogs lean on it): the
    /// host stops the program it had to bend, reports the axis, and goes on taking commands.
    @Test func aServedProgramThatBreaksALimitIsStoppedAndReported() {
        let rig = testRig()
        let mailbox = SourceMailbox()
        let loop = ControlLoop(
            rig: rig, source: ProgramHost(rig: rig, startPose: [-80, 0]), output: RecordingOutput(), clock: ManualClock(),
            options: LoopOptions(realtime: false, stopWhenLimited: false), startPose: [-80, 0], mailbox: mailbox)
        mailbox.post(.program(.play(Self.tooFast(rig))))
        loop.start()
        var sawLimited = false
        var sawStoppedEnd = false
        let deadline = ContinuousClock.now + .seconds(60)
        while !(sawLimited && sawStoppedEnd), ContinuousClock.now < deadline {
            _ = loop.eventsPushed.wait(timeout: .now() + .milliseconds(500))
            while let event = loop.events.pop() {
                if case .limiterIntervened(axis: "pan", _) = event { sawLimited = true }
                if case .player(.programEnded(stopped: true), _) = event { sawStoppedEnd = true }
            }
        }
        #expect(sawLimited)
        #expect(sawStoppedEnd)
        loop.mailbox.requestShutdown()
        let result = loop.wait()
        #expect(result.fault == nil)
    }
}
