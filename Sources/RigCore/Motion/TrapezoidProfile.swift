/// A rest-to-rest move of one axis with a trapezoidal velocity profile: accelerate at
/// `acceleration`, cruise at `peakVelocity`, decelerate at `acceleration`.
public struct TrapezoidProfile: Sendable, Equatable {
    public let start: Double
    public let distance: Double
    public let peakVelocity: Double
    public let acceleration: Double
    public let duration: Double

    /// The shortest duration of a rest-to-rest move of `distance` within the limits.
    public static func minimumDuration(distance: Double, maxVelocity: Double, maxAcceleration: Double) -> Double {
        let d = abs(distance)
        guard d > 0 else { return 0 }
        if d >= maxVelocity * maxVelocity / maxAcceleration {
            return d / maxVelocity + maxVelocity / maxAcceleration
        }
        return 2 * (d / maxAcceleration).squareRoot()
    }

    /// The move of `distance` stretched to take exactly `duration` (≥ the minimum),
    /// accelerating at the full limit and cruising slower, so it never exceeds either.
    public init(start: Double, distance: Double, duration: Double, maxAcceleration: Double) {
        self.start = start
        self.distance = distance
        self.acceleration = maxAcceleration
        self.duration = duration
        let d = abs(distance)
        if d == 0 || duration <= 0 {
            peakVelocity = 0
        } else {
            // d = v (T − v/a)  ⇒  v = (aT − √(a²T² − 4ad)) / 2
            let aT = maxAcceleration * duration
            let disc = max(0, aT * aT - 4 * maxAcceleration * d)
            peakVelocity = (aT - disc.squareRoot()) / 2
        }
    }

    /// Position at `t` seconds after the start (clamped to the move).
    @inline(__always)
    public func position(at t: Double) -> Double {
        if peakVelocity == 0 { return start + (t >= duration ? distance : 0) }
        let sign: Double = distance < 0 ? -1 : 1
        let v = peakVelocity, a = acceleration
        let ramp = v / a
        let travelled: Double
        if t <= 0 {
            travelled = 0
        } else if t >= duration {
            travelled = abs(distance)
        } else if t < ramp {
            travelled = 0.5 * a * t * t
        } else if t <= duration - ramp {
            travelled = 0.5 * a * ramp * ramp + v * (t - ramp)
        } else {
            let r = duration - t
            travelled = abs(distance) - 0.5 * a * r * r
        }
        return start + sign * travelled
    }
}

/// A synchronized move of all axes from one pose to another: every axis starts and
/// arrives together, as fast as the slowest axis's limits allow, in whole ticks.
public struct PoseMove: Sendable, Equatable {
    public private(set) var profiles: [TrapezoidProfile]
    public private(set) var ticks: Int

    public init() {
        profiles = []
        ticks = 0
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
            let t = TrapezoidProfile.minimumDuration(distance: to[i] - from[i], maxVelocity: axes[i].maxVelocity,
                                                     maxAcceleration: axes[i].maxAcceleration)
            longest = max(longest, t)
        }
        // A hair of slack absorbs rounding so the stretched profile stays within limits.
        let ticks = longest == 0 ? 0 : tickCount(seconds: longest, tickSeconds: tickSeconds, slack: 1e-9)
        self.ticks = ticks
        let duration = Double(ticks) * tickSeconds
        if profiles.count != axes.count {
            profiles = axes.indices.map { _ in TrapezoidProfile(start: 0, distance: 0, duration: 0, maxAcceleration: 1) }
        }
        for i in axes.indices {
            profiles[i] = TrapezoidProfile(start: from[i], distance: to[i] - from[i], duration: duration,
                                           maxAcceleration: axes[i].maxAcceleration)
        }
    }

    public var durationSeconds: Double { profiles.first?.duration ?? 0 }

    /// Positions at tick `k` (0 = start, `ticks` = arrived).
    @inline(__always)
    public func sample(tick k: Int, tickSeconds: Double, into positions: inout [Double]) {
        let t = Double(k) * tickSeconds
        for i in profiles.indices {
            positions[i] = profiles[i].position(at: t)
        }
    }
}
