/// A synchronized move of all axes from one pose to another: every axis starts and
/// arrives together, as fast as the slowest axis's velocity, acceleration and jerk limits
/// allow, in whole ticks. Each axis follows a jerk-limited `SCurveProfile`; the axes that
/// could be faster are stretched to the common duration (slower cruise, same ramps), which
/// keeps each of them within its own limits.
public struct PoseMove: Sendable, Equatable {
    public private(set) var profiles: [SCurveProfile]
    public private(set) var ticks: Int
    /// The target pose exactly as given (start + distance may differ in the last bit).
    private var targets: [Double]

    /// The longest move, in ticks, a plan produces (a guard against absurd limits: about
    /// 3.5 years at 100 Hz). Longer moves are cut to it and arrive with a jump.
    public static let maxTicks = 1 << 34

    public init() {
        profiles = []
        ticks = 0
        targets = []
    }

    /// Plans the move. `tickSeconds` rounds the duration up to whole ticks so the last
    /// sample lands exactly on the target.
    public init(from: [Double], to: [Double], axes: [Axis], tickSeconds: Double) {
        self.init()
        plan(from: from, to: to, axes: axes, tickSeconds: tickSeconds)
    }

    /// Replans in place, reusing storage (no allocation once sized).
    public mutating func plan(from: [Double], to: [Double], axes: [Axis], tickSeconds: Double) {
        var longest = 0.0
        for i in axes.indices {
            let t = SCurveProfile.minimumDuration(
                distance: to[i] - from[i], maxVelocity: axes[i].maxVelocity,
                maxAcceleration: axes[i].maxAcceleration, maxJerk: axes[i].maxJerk)
            longest = max(longest, t)
        }
        // A hair of slack rounds up past the noise, so the stretched profile stays within limits.
        let ticks = min(tickCount(seconds: longest, tickSeconds: tickSeconds, slack: 1e-9), Self.maxTicks)
        self.ticks = ticks
        let duration = Double(ticks) * tickSeconds
        if profiles.count != axes.count {
            profiles = axes.indices.map { _ in
                SCurveProfile(start: 0, distance: 0, duration: 0, maxVelocity: 1, maxAcceleration: 1, maxJerk: 1)
            }
        }
        if targets.count != axes.count { targets = [Double](repeating: 0, count: axes.count) }
        for i in axes.indices {
            targets[i] = to[i]
            profiles[i] = SCurveProfile(
                start: from[i], distance: to[i] - from[i], duration: duration,
                maxVelocity: axes[i].maxVelocity, maxAcceleration: axes[i].maxAcceleration,
                maxJerk: axes[i].maxJerk)
        }
    }

    public var durationSeconds: Double { profiles.first?.duration ?? 0 }

    /// Positions at tick `k` (0 = start, `ticks` = arrived).
    @inline(__always)
    public func sample(tick k: Int, tickSeconds: Double, into positions: inout [Double]) {
        let t = Double(k) * tickSeconds
        let arrived = k >= ticks
        for i in profiles.indices {
            positions[i] = arrived ? targets[i] : profiles[i].position(at: t)
        }
    }
}
