/// A rest-to-rest move of one axis with a trapezoidal velocity profile: accelerate at
/// `acceleration`, cruise at `peakVelocity`, decelerate at `acceleration`.
///
/// Moves are planned as `SCurveProfile`s (jerk-limited) since round 2; the trapezoid stays
/// as the reference the S-curve's extra move time is measured against (`rig bench moves`).
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
        let v = peakVelocity
        let a = acceleration
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
