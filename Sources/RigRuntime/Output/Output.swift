import RigCore

/// One channel an output drives, as the rig file describes it.
public struct OutputChannel: Sendable, Equatable {
    public var axisName: String
    public var channel: Int
    public var kind: AxisKind

    public init(axisName: String, channel: Int, kind: AxisKind) {
        self.axisName = axisName
        self.channel = channel
        self.kind = kind
    }

    public init(_ axis: Axis) {
        self.init(axisName: axis.name, channel: axis.channel, kind: axis.kind)
    }
}

/// A device that turns channel commands into pulses: the simulator, a PCA9685, a
/// BLEControl board. The control loop owns it from `start` to `shutdown`.
public protocol Output: AnyObject {
    /// A short human description ("sim", "pca9685 /dev/i2c-1 0x40").
    var label: String { get }

    /// Opens and prepares the device. Called once, before the loop starts and off the
    /// loop thread; it may block (connect, initialise). `initial` is what each channel
    /// (in `channels` order) should show first: the pose the rig starts from.
    func start(channels: [OutputChannel], initial: [ChannelCommand]) throws

    /// Sends this tick's commands (one per channel, in `start` order). Runs on the loop
    /// thread: no blocking waits, no allocation, no logging per call.
    ///
    /// Fills `sent[i]` with the pulse width actually programmed on channel `i` in µs,
    /// after the output's own quantization (for a pwm channel: the high time per
    /// period), or `.nan` if nothing was sent for that channel this tick.
    func write(_ commands: [ChannelCommand], sent: inout [Double]) throws(OutputFault)

    /// Puts every channel in its safe state (`safe`, in `start` order) and releases the
    /// device. Called exactly once on every way out: end, Ctrl-C, fault. Must not throw.
    func shutdown(safe: [ChannelCommand])

    /// One line for the live view and the log ("ready", "reconnecting (2)"), if the
    /// output has a connection state worth showing. Read from any thread.
    var statusLine: String? { get }

    /// The PWM period this output runs pwm channels at, in µs (to turn a pwm channel's
    /// high time back into a duty cycle in the trace).
    var pwmPeriodMicroseconds: Double { get }

    /// What the channel was last left at by an earlier run (a state file), if the output
    /// knows: the program then eases from there instead of jumping to home. Called
    /// before `start`.
    func lastKnownCommand(for channel: OutputChannel) -> ChannelCommand?

    /// Saves whatever the output keeps across runs. Called every few seconds from the
    /// session's event thread (never the loop thread) and is cheap when nothing changed.
    func persistState()

    /// The hardware this output drives exclusively, as lock names ("pca9685-i2c-1-0x40"):
    /// the session holds a `HardwareLock` on each from before `start` to after `shutdown`,
    /// so a second process cannot drive the same servos. Empty for the simulator.
    var exclusiveResources: [String] { get }

    /// Where the camera on axis `axis` (in `start` order) points after the last write,
    /// when the output models it (the simulator's payload): for the trace. Called on the
    /// loop thread after each write: must not allocate. Nil for real hardware.
    func modelledCameraAngle(axis: Int) -> Double?

    /// The loop woke `ticks` whole ticks late in real time: nothing was written meanwhile.
    /// Hardware held its last pulses by itself; a model of it (the simulator) catches up.
    /// Called on the loop thread before the late tick's write: must not allocate.
    func elapsedWithoutWrites(ticks: Int)

    /// Whether the output wants a planned move's coming pulses (`expect(pulses:window:ticks:)`):
    /// it plays the one-count trim (`CountTrim`). Read once, at the loop's start.
    var looksAhead: Bool { get }

    /// A planned move's coming commands, after this tick's write: its frames stop changing
    /// `ticks` ticks from now (the next write is tick 1); `pulses` holds the last `window`
    /// ticks' commanded pulses, µs (tick `k` at row `k − ticks + window − 1`, one column per
    /// channel in `start` order, NaN for a channel that is not sent a pulse; rows before
    /// tick 1 unused). Called on the loop thread: must not allocate.
    func expect(pulses: [Double], window: Int, ticks: Int)
}

extension Output {
    public var statusLine: String? { nil }
    public var pwmPeriodMicroseconds: Double { servoFramePeriodMicroseconds }
    public func lastKnownCommand(for channel: OutputChannel) -> ChannelCommand? { nil }
    public func persistState() {}
    public var exclusiveResources: [String] { [] }
    public func modelledCameraAngle(axis: Int) -> Double? { nil }
    public func elapsedWithoutWrites(ticks: Int) {}
    public var looksAhead: Bool { false }
    public func expect(pulses: [Double], window: Int, ticks: Int) {}
}

/// A planned move's frames ahead (`MotionSource.framesAhead`) as the pulses an output
/// expects (`Output.expect(pulses:window:ticks:)`): the control loop's and the bench's.
public enum OutputLookAhead {
    /// `rows`: the source's last `window` frames of a move ending `ticks` ticks from now
    /// (tick `k` at row `(k − 1) % window`); `pulses` (the same size): tick `k`'s commanded
    /// pulses at row `k − ticks + window − 1`, NaN for an axis not sent a pulse.
    public static func pulses(ofFramesAhead rows: [Double], ticks: Int, window: Int, axes: [Axis], into pulses: inout [Double]) {
        let n = axes.count
        guard ticks > 0, window > 0, rows.count >= window * n, pulses.count >= window * n else { return }
        for k in max(1, ticks - window + 1)...ticks {
            let from = (k - 1) % window
            let to = k - ticks + window - 1
            for i in 0..<n {
                if case .pulse(let us) = axes[i].command(forPosition: rows[from * n + i]) {
                    pulses[to * n + i] = us
                } else {
                    pulses[to * n + i] = .nan
                }
            }
        }
    }
}

/// Why an output failed, typed across the output boundary: the cause (what a caller may
/// act on), the device it happened on, and the driver's explanation for a person (what
/// to check). The loop stops on one and puts the rig in its safe state.
public struct OutputFault: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Cause: Sendable, Equatable {
        /// The caller asked what the output cannot do (channels out of range or used twice,
        /// a write of the wrong size, a write before `start`): a bug, not the hardware.
        case misuse
        /// A system call on the device failed, with its errno (after the driver's retries).
        case system(errno: Int32)
        /// The device answered, but not as the chip it should be (a read-back that does not
        /// match what was written).
        case wrongDevice
        /// The link to a wireless board could not be made or kept.
        case link
    }

    public var cause: Cause
    /// The device, as the driver names it ("pca9685 at 0x40 on /dev/i2c-1").
    public var device: String
    /// What happened and what to check, for a person.
    public var detail: String

    public init(_ cause: Cause, device: String, _ detail: String) {
        self.cause = cause
        self.device = device
        self.detail = detail
    }

    public var description: String { "\(device): \(detail)" }
}
