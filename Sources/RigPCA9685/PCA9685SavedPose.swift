import RigCore
import RigRuntime

/// A pose saved by an earlier run: what each channel was last driven to.
public struct PCA9685SavedPose: Sendable, Equatable {
    public var periodMicroseconds: Double
    /// High ticks per channel number (0…15); nil for channels never driven.
    public var counts: [Int?]

    /// The pulse width (high time, µs) channel `channel` last showed, if it was driven.
    public func pulseMicroseconds(channel: Int) -> Double? {
        guard counts.indices.contains(channel), let count = counts[channel] else { return nil }
        return PCA9685Math.pulseMicroseconds(counts: count, periodMicroseconds: periodMicroseconds)
    }
}

extension PCA9685SavedPose {
    /// What `channel` last showed, as a command to start from: a pulse for a servo
    /// channel (turn it into an angle with `Calibration.angle(forPulseMicroseconds:)`), a
    /// duty cycle for a pwm channel; nil if that channel was never driven.
    public func command(for channel: OutputChannel) -> ChannelCommand? {
        guard counts.indices.contains(channel.channel), let count = counts[channel.channel] else { return nil }
        switch channel.kind {
        case .servo:
            return .pulse(microseconds: PCA9685Math.pulseMicroseconds(counts: count, periodMicroseconds: periodMicroseconds))
        case .pwm:
            return .duty(percent: Double(count) * 100 / Double(PCA9685Math.countsPerPeriod))
        }
    }
}
