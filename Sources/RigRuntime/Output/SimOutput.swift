import RigCore
import Synchronization

/// The built-in simulated rig: each servo a slew-rate-limited actuator that follows its
/// commanded pulse at most `servoSpeedDegreesPerSecond`.
///
/// A servo axis with a `payload`, a `deadbandDeg` or a `lagSeconds` is simulated as the
/// whole chain a real head is: the pulse quantized to a PCA9685's 12-bit counts at its PWM
/// frequency (what it "sends"; `SimOutputConfig.frequencyHz`, 50 Hz by default), the servo
/// seeing one pulse per PWM period (the register's value when a period begins: between
/// two, a new command waits), answering `lagSeconds` later and leaving an error within
/// half its deadband uncorrected, the horn slewing, and the camera on it a damped spring
/// (`PayloadResponse`) that rings after every move. Other axes send the commanded pulse,
/// unquantized, and the camera is the horn. A modelled axis starts at rest on the whole
/// count its initial pulse rounds to (what a PCA9685 sends at start). Where a count is
/// latched every tick (the PWM period one loop tick), a modelled shaped axis gets the
/// one-count trim after its moves (`CountTrim`, told a program's coming pulses through
/// `expect`), as a `pca9685` output's does.
public final class SimOutput: Output, @unchecked Sendable {
    public let config: SimOutputConfig
    private let axes: [Axis]
    private let tickSeconds: Double
    private var horn: [Double] = []
    /// Per modelled axis: the camera on its horn (nil: the camera is the horn).
    private var cameras: [PayloadResponse?] = []
    /// Per axis, the commanded angles of the last `lagTicks[i] + 1` ticks (a delay line,
    /// axis-major, sized at `start`).
    private var lagLine: [Double] = []
    private var lagTicks: [Int] = []
    private var lagWindow = 1
    private var lagNewest = 0
    private let modelled: [Bool]
    /// Per axis, the commanded angle of the pulse the servo got last (one per PWM period).
    private var latched: [Double] = []
    /// Seconds since the current PWM period began.
    private var periodClock = 0.0
    private let periodSeconds: Double
    private let snapshot = Mutex<(horn: [Double], camera: [Double], rate: [Double], at: UInt64)>(([], [], [], 0))
    private let clock = MonotonicClock()
    /// The last write's commands (held through a stall) and a scratch `sent` for them.
    private var held: [ChannelCommand] = []
    private var heldSent: [Double] = []
    private let shutDown = Atomic<Bool>(false)
    /// The one-count trim, where it can work (nil elsewhere).
    private var trim: CountTrim?
    /// The safe commands the rig was left in (for tests and the final report).
    public private(set) var safeState: [ChannelCommand] = []

    /// PCA9685 counts per PWM period (12 bits; the same arithmetic as `PCA9685Math.counts`,
    /// which this module does not link).
    static let countsPerPeriod = 4096.0

    /// The pulse a PCA9685 with PWM period `period` sends for `us`: the nearest whole count.
    public static func quantized(pulseMicroseconds us: Double, periodMicroseconds period: Double) -> Double {
        (min(max(us, 0), period) / period * countsPerPeriod).rounded() / countsPerPeriod * period
    }

    /// One count of a PCA9685 with PWM period `period`, microseconds.
    public static func countMicroseconds(periodMicroseconds period: Double) -> Double { period / countsPerPeriod }

    /// Whether the simulator models `axis` (a servo with a `payload`, a `deadbandDeg` or a
    /// `lagSeconds`): sent in PCA9685 counts at `SimOutputConfig.frequencyHz`, the horn and
    /// its camera simulated. Any other axis is continuous and its camera is the frame.
    public static func models(_ axis: Axis) -> Bool {
        axis.kind == .servo && (axis.payload != nil || axis.servo != ServoImperfection())
    }

    public init(config: SimOutputConfig, rig: Rig) {
        self.config = config
        self.axes = rig.axes
        self.tickSeconds = rig.tickSeconds
        periodSeconds = config.periodMicroseconds / 1_000_000
        modelled = rig.axes.map(Self.models)
        // Only a modelled axis is sent in counts (elsewhere the camera is the horn).
        trim = CountTrim(rig: rig, periodMicroseconds: config.periodMicroseconds)
    }

    public var label: String { "sim" }

    public func start(channels: [OutputChannel], initial: [ChannelCommand]) throws {
        horn = axes.indices.map { i in
            // A modelled axis starts on the whole count a PCA9685 sends for its first pulse
            // (the camera at rest there), as the trim's model does.
            if modelled[i], case .pulse(let us) = initial[i], let calibration = axes[i].calibration {
                let quantized = Self.quantized(pulseMicroseconds: us, periodMicroseconds: config.periodMicroseconds)
                trim?.start(axis: i, quantizedMicroseconds: quantized)
                return calibration.angle(forPulseMicroseconds: quantized)
            }
            return position(of: initial[i], axis: axes[i]) ?? axes[i].home
        }
        cameras = axes.indices.map { i in axes[i].payload.map { PayloadResponse(payload: $0, tickSeconds: tickSeconds, angle: horn[i]) } }
        lagTicks = axes.map { Int(($0.servo.lagSeconds / tickSeconds).rounded()) }
        lagWindow = (lagTicks.max() ?? 0) + 1
        lagNewest = 0
        lagLine = [Double](repeating: 0, count: axes.count * lagWindow)
        latched = horn.map { $0 }
        // The first write begins a period.
        periodClock = periodSeconds
        for i in axes.indices {
            for s in 0..<lagWindow { lagLine[i * lagWindow + s] = horn[i] }
        }
        // Copies with storage of their own: sharing `horn`'s would make the first write()
        // copy on write, on the loop thread.
        snapshot.withLock { $0 = (horn.map { $0 }, horn.map { $0 }, horn.map { _ in 0 }, clock.now()) }
        held = initial.map { $0 }
        heldSent = initial.map { _ in 0 }
    }

    public func write(_ commands: [ChannelCommand], sent: inout [Double]) throws(OutputFault) {
        for i in commands.indices where i < held.count { held[i] = commands[i] }
        advance(commands, sent: &sent, trimming: true)
        publish()
    }

    /// The loop woke `ticks` ticks late: the servos held their last pulse meanwhile, and a
    /// payload went on ringing (up to 30 s of it), as a real head does through a stall.
    public func elapsedWithoutWrites(ticks: Int) {
        guard !held.isEmpty, ticks > 0 else { return }
        // The servos held the last pulses: a trim under way is lost.
        trim?.cancel()
        for _ in 0..<min(ticks, Int(30 / tickSeconds)) { advance(held, sent: &heldSent, trimming: false) }
        publish()
    }

    public var looksAhead: Bool { trim != nil }

    public func expect(pulses: [Double], window: Int, ticks: Int) {
        let period = config.periodMicroseconds
        trim?.expect(pulses: pulses, window: window, ticks: ticks) { Self.quantized(pulseMicroseconds: $0, periodMicroseconds: period) }
    }

    /// One tick of the modelled chain with `commands` (`trimming`: a write, whose counts the
    /// trim may move; a stall's catch-up holds them).
    private func advance(_ commands: [ChannelCommand], sent: inout [Double], trimming: Bool) {
        let step = config.servoSpeedDegreesPerSecond * tickSeconds
        lagNewest = lagNewest + 1 == lagWindow ? 0 : lagNewest + 1
        // A period begins with this tick: the servo gets this tick's pulse.
        let newPeriod = periodClock >= periodSeconds * (1 - 1e-9)
        if newPeriod { periodClock = min(max(periodClock - periodSeconds, 0), periodSeconds) }
        periodClock += tickSeconds
        for i in axes.indices {
            switch commands[i] {
            case .pulse(let us):
                guard modelled[i] else {
                    sent[i] = us
                    let target = axes[i].calibration?.angle(forPulseMicroseconds: us) ?? horn[i]
                    horn[i] += min(max(target - horn[i], -step), step)
                    continue
                }
                var quantized = Self.quantized(pulseMicroseconds: us, periodMicroseconds: config.periodMicroseconds)
                if trimming, trim != nil {
                    let counts = trim?.counts(axis: i, commandedMicroseconds: us, quantizedMicroseconds: quantized) ?? 0
                    quantized += Double(counts) * Self.countMicroseconds(periodMicroseconds: config.periodMicroseconds)
                }
                sent[i] = quantized
                if newPeriod { latched[i] = axes[i].calibration?.angle(forPulseMicroseconds: quantized) ?? horn[i] }
                let base = i * lagWindow
                lagLine[base + lagNewest] = latched[i]
                var slot = lagNewest - lagTicks[i]
                if slot < 0 { slot += lagWindow }
                let target = lagLine[base + slot]
                // The servo leaves an error within half its deadband alone, and stops
                // correcting one as soon as it is inside it.
                let band = axes[i].servo.deadbandDeg / 2
                let error = target - horn[i]
                if abs(error) > band {
                    let goal = target - (error > 0 ? band : -band)
                    horn[i] += min(max(goal - horn[i], -step), step)
                }
            case .duty(let percent):
                sent[i] = percent / 100 * servoFramePeriodMicroseconds
                horn[i] = percent
            case .off:
                sent[i] = 0
            }
            cameras[i]?.step(horn: horn[i])
        }
    }

    /// What other threads see: the horns, the cameras, and when (this write's time).
    private func publish() {
        let now = clock.now()
        snapshot.withLock { s in
            for i in horn.indices {
                s.horn[i] = horn[i]
                s.camera[i] = cameras[i]?.angle ?? horn[i]
                s.rate[i] = cameras[i]?.rate ?? 0
            }
            s.at = now
        }
    }

    public func shutdown(safe: [ChannelCommand]) {
        guard !shutDown.exchange(true, ordering: .acquiringAndReleasing) else { return }
        safeState = safe
    }

    /// Where each simulated servo horn is now (degrees, or % for pwm).
    public var hornPositions: [Double] { snapshot.withLock { $0.horn } }

    /// Where the camera on each axis points now, and how fast it turns (°/s): the horn
    /// and 0 on axes without a payload.
    public var cameraMotion: (angles: [Double], rates: [Double]) { snapshot.withLock { ($0.camera, $0.rate) } }

    /// Where the camera points on each axis after the last write (the payload ringing on
    /// its horn, the horn elsewhere), from any thread; nil before `start`. The simulated
    /// camera's live view draws from it (`SessionDoor.cameraPose`).
    public var modelledCameraPose: CameraPose? {
        let (angles, at) = snapshot.withLock { ($0.camera, $0.at) }
        return angles.isEmpty ? nil : CameraPose(angles, atNanoseconds: at)
    }

    /// The loop thread's view of the camera on axis `axis` (for the trace).
    public func modelledCameraAngle(axis: Int) -> Double? {
        cameras.indices.contains(axis) ? cameras[axis]?.angle : nil
    }

    /// The loop thread's view of the camera's rate on axis `axis`, °/s (0 without a payload).
    func modelledCameraRate(axis: Int) -> Double {
        cameras.indices.contains(axis) ? cameras[axis]?.rate ?? 0 : 0
    }

    var axisCount: Int { axes.count }

    public var isShutDown: Bool { shutDown.load(ordering: .acquiring) }

    private func position(of command: ChannelCommand, axis: Axis) -> Double? {
        switch command {
        case .pulse(let us): axis.calibration?.angle(forPulseMicroseconds: us)
        case .duty(let p): p
        case .off: nil
        }
    }
}
