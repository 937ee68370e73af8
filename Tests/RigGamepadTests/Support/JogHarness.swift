import RigCore
import RigGamepad
import RigRuntime
import RigTestSupport

/// A jog session without threads: a real pipe carries recorded evdev bytes to a real
/// `GamepadReader` (ioctls faked), which is read once per tick before the source ticks;
/// every emitted frame goes through a `LimitMonitor`.
final class JogHarness {
    let rig: Rig
    let pipe: TestPipe
    let fake: FakeEvdevControl
    let input = GamepadInput()
    let preview = PreviewSlot()
    let notices = SPSCRing<JogNotice>(capacity: 1024)
    let reader: GamepadReader
    var source: JogSource
    var monitor: LimitMonitor
    var frame: [Double]
    var violations: [LimitViolation] = []
    var readResult = GamepadReader.ReadResult.idle
    /// Every emitted frame.
    var frames: [[Double]] = []
    /// Probe the device every 10 ticks without input, as the reader thread does when a
    /// held stick sends nothing (the watchdog's sign of life).
    var keepAlive = true
    /// Build a requested preview between ticks, as the session's thread does.
    var preparesPreview = true

    init(rig: Rig? = nil, config: JogConfig? = nil, startPose: [Double]? = nil, fake: FakeEvdevControl = FakeEvdevControl()) throws {
        let rig = try rig ?? TestRig.rig()
        self.rig = rig
        let config = config ?? JogConfig.of(rig)
        let start = startPose ?? rig.homePose
        pipe = try TestPipe()
        self.fake = fake
        reader = try GamepadReader(path: "/dev/input/event-test", fd: pipe.readEnd, control: fake, config: config, input: input)
        source = JogSource(
            rig: rig, config: config, input: input, preview: preview, startPose: start, notices: notices,
            deviceFlatFraction: reader.interpreter.stickFlatFraction)
        monitor = LimitMonitor(axes: rig.axes, tickSeconds: rig.tickSeconds, startPose: start)
        frame = start
    }

    func send(_ build: (inout EventStream) -> Void) throws {
        var stream = EventStream()
        build(&stream)
        try pipe.write(stream.take())
    }

    /// Runs `ticks` loop ticks (or until `until` holds).
    @discardableResult
    func run(ticks: Int, until: ((JogHarness) -> Bool)? = nil) -> Int {
        for n in 0..<ticks {
            if case .idle = readResult {
                let before = input.snapshot.signsOfLife
                readResult = reader.readAvailable()
                if keepAlive, case .idle = readResult, input.snapshot.signsOfLife == before, source.tickIndex % 10 == 9 {
                    _ = reader.probe()
                }
            }
            _ = source.tick(into: &frame)
            // The session's thread, between ticks: builds a preview asked for.
            if preparesPreview { preview.prepareRequested(rig: rig) }
            frames.append(frame)
            if let v = monitor.observe(frame) { violations.append(v) }
            if let until, until(self) { return n + 1 }
        }
        return ticks
    }

    func drainNotices() -> [JogNotice] {
        var out: [JogNotice] = []
        while let n = notices.pop() { out.append(n) }
        return out
    }

    var velocities: [Double] { source.velocities }
}
