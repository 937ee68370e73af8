import RigCore
import Synchronization

/// The built-in simulated rig: each servo a slew-rate-limited actuator that follows its
/// commanded pulse at most `servoSpeedDegreesPerSecond`. What it "sends" is the
/// commanded pulse, unquantized.
public final class SimOutput: Output, @unchecked Sendable {
    public let config: SimOutputConfig
    private let axes: [Axis]
    private let tickSeconds: Double
    private var horn: [Double] = []
    private let snapshot = Mutex<[Double]>([])
    private let shutDown = Atomic<Bool>(false)
    /// The safe commands the rig was left in (for tests and the final report).
    public private(set) var safeState: [ChannelCommand] = []

    public init(config: SimOutputConfig, rig: Rig) {
        self.config = config
        self.axes = rig.axes
        self.tickSeconds = rig.tickSeconds
    }

    public var label: String { "sim" }

    public func start(channels: [OutputChannel], initial: [ChannelCommand]) throws {
        horn = axes.indices.map { i in position(of: initial[i], axis: axes[i]) ?? axes[i].home }
        // A copy with storage of its own: sharing `horn`'s would make the first write()
        // copy on write, on the loop thread.
        snapshot.withLock { $0 = horn.map { $0 } }
    }

    public func write(_ commands: [ChannelCommand], sent: inout [Double]) throws(OutputFault) {
        let step = config.servoSpeedDegreesPerSecond * tickSeconds
        for i in axes.indices {
            switch commands[i] {
            case .pulse(let us):
                sent[i] = us
                let target = axes[i].calibration?.angle(forPulseMicroseconds: us) ?? horn[i]
                horn[i] += min(max(target - horn[i], -step), step)
            case .duty(let percent):
                sent[i] = percent / 100 * servoFramePeriodMicroseconds
                horn[i] = percent
            case .off:
                sent[i] = 0
            }
        }
        snapshot.withLock { s in for i in horn.indices { s[i] = horn[i] } }
    }

    public func shutdown(safe: [ChannelCommand]) {
        guard !shutDown.exchange(true, ordering: .acquiringAndReleasing) else { return }
        safeState = safe
    }

    /// Where each simulated servo horn is now (degrees, or % for pwm).
    public var hornPositions: [Double] { snapshot.withLock { $0 } }

    public var isShutDown: Bool { shutDown.load(ordering: .acquiring) }

    private func position(of command: ChannelCommand, axis: Axis) -> Double? {
        switch command {
        case .pulse(let us): axis.calibration?.angle(forPulseMicroseconds: us)
        case .duty(let p): p
        case .off: nil
        }
    }
}
