import CLinux
import RigCore
import RigGamepad
import RigRuntime
import RigTestSupport
import Testing

/// The jog source inside the real control loop (manual clock, simulated output). The
/// evdev bytes are written to the pipe at scripted ticks and read on the loop thread
/// just before the source ticks, so the run is deterministic.
struct ScriptedJog: MotionSource {
    var inner: JogSource
    let reader: GamepadReader
    let pipe: TestPipe
    let script: [Int: [UInt8]]
    let unplugAt: Int?
    let stopAt: Int?
    var monitor: LimitMonitor
    let log: ScriptLog
    var ticks = 0

    mutating func tick(into positions: inout [Double]) -> PlayerEvent? {
        ticks += 1
        if let bytes = script[ticks] { try? pipe.write(bytes) }
        if ticks == unplugAt { pipe.closeWriteEnd() }
        if ticks == stopAt { inner.stop() }
        _ = reader.readAvailable()
        let event = inner.tick(into: &positions)
        if monitor.observe(positions) != nil { log.violations += 1 }
        if let unplugAt, ticks > unplugAt, log.restTick == nil, inner.velocities.allSatisfy({ $0 == 0 }) { log.restTick = ticks }
        return event
    }

    mutating func advance() { inner.advance() }
    mutating func stop() { inner.stop() }
    var isFinished: Bool { inner.isFinished }
    var progress: PlaybackProgress { inner.progress }
}

/// What the scripted source saw (read after the loop has ended).
final class ScriptLog: @unchecked Sendable {
    var violations = 0
    var restTick: Int?
}

@Suite("jogging through the control loop")
struct JogLoopTests {
    static func bytes(_ build: (inout EventStream) -> Void) -> [UInt8] {
        var s = EventStream()
        build(&s)
        return s.take()
    }

    static func make(script: [Int: [UInt8]], unplugAt: Int? = nil, stopAt: Int? = nil, log: ScriptLog = ScriptLog()) throws -> (
        ControlLoop<ScriptedJog>, SimOutput
    ) {
        let rig = try TestRig.rig()
        let config = JogConfig.standard(for: rig.axes)
        let pipe = try TestPipe()
        let input = GamepadInput()
        let reader = try GamepadReader(path: "pipe", fd: pipe.readEnd, control: FakeEvdevControl(), config: config, input: input)
        let source = JogSource(
            rig: rig, config: config, input: input, preview: PreviewSlot(), startPose: rig.homePose,
            notices: SPSCRing(capacity: 256))
        let scripted = ScriptedJog(
            inner: source, reader: reader, pipe: pipe, script: script, unplugAt: unplugAt, stopAt: stopAt,
            monitor: LimitMonitor(axes: rig.axes, tickSeconds: rig.tickSeconds, startPose: rig.homePose), log: log)
        let output = SimOutput(config: SimOutputConfig(), rig: rig)
        try output.start(channels: rig.axes.map(OutputChannel.init), initial: rig.axes.map { $0.command(forPosition: $0.home) })
        let loop = ControlLoop(
            rig: rig, source: scripted, output: output, clock: ManualClock(),
            options: LoopOptions(realtime: false, stopWhenLimited: false), startPose: rig.homePose)
        return (loop, output)
    }

    @Test func startSavesAndTheLoopEndsInTheSafeState() throws {
        let (loop, output) = try Self.make(script: [
            1: Self.bytes { s in
                s.abs(ABS_X, 32767)
                s.abs(ABS_Y, -32768)
                s.report()
            },
            30: Self.bytes { s in
                s.abs(ABS_X, 32760)
                s.report()
            },
            60: Self.bytes { $0.tap(BTN_START) },
        ])
        let result = loop.run()
        #expect(result.fault == nil)
        #expect(output.isShutDown)
        #expect(output.safeState.count == 3)
        #expect(result.finalPose[0] > 5 && result.finalPose[1] > 3)
        #expect(result.ticks > 60 && result.ticks < 300)
    }

    @Test func ctrlCStopsAJogWithinTheLimits() throws {
        let (loop, output) = try Self.make(script: [
            1: Self.bytes { s in
                s.abs(ABS_X, 32767)
                s.report()
            }
        ])
        loop.mailbox.requestShutdown()
        let result = loop.run()
        #expect(result.fault == nil)
        #expect(output.isShutDown)
    }

    @Test func unplugMidMoveDeceleratesToRestThenCtrlCEnds() throws {
        let log = ScriptLog()
        let (loop, output) = try Self.make(
            script: [
                1: Self.bytes { s in
                    s.abs(ABS_X, 32767)
                    s.report()
                }
            ],
            unplugAt: 40, stopAt: 250, log: log)
        let result = loop.run()
        #expect(result.fault == nil)
        #expect(output.isShutDown)
        #expect(log.violations == 0)
        let rest = try #require(log.restTick)
        #expect(rest > 40 && rest < 250)
        #expect(result.ticks >= 250)
    }
}
