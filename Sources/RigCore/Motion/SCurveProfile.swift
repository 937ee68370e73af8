import FoundationEssentials
import Glibc

/// A rest-to-rest move of one axis with a jerk-limited ("S-curve", seven-segment) velocity
/// profile: the acceleration ramps up at `jerk`, holds at `peakAcceleration`, ramps down;
/// the axis cruises at `peakVelocity`; then the mirror image brings it to rest.
///
/// A trapezoid switches its acceleration on and off in one step, and a hobby-servo head
/// rings after each step; limiting the jerk is what printer firmware and commercial heads
/// do against that. The profile is symmetric (deceleration mirrors acceleration), which is
/// time-optimal for a rest-to-rest move under symmetric velocity, acceleration and jerk
/// limits.
///
/// Sampled at any tick rate its finite differences stay within the continuous limits: the
/// k-th difference over dt is the k-th derivative averaged by a non-negative kernel.
public struct SCurveProfile: Sendable, Equatable {
    public let start: Double
    public let distance: Double
    /// Seconds from rest to rest.
    public let duration: Double
    /// Cruise speed (≤ maxVelocity), units/s.
    public let peakVelocity: Double
    /// Largest acceleration reached (≤ maxAcceleration), units/s².
    public let peakAcceleration: Double
    /// Jerk while the acceleration ramps, units/s³.
    public let jerk: Double
    /// Seconds of one acceleration ramp (0 → peakAcceleration).
    public let rampSeconds: Double
    /// Seconds from rest to `peakVelocity` (two ramps and the constant-acceleration part).
    public let accelerationSeconds: Double

    /// The rest-to-rest move of `distance` that takes exactly `duration` seconds (at least
    /// `minimumDuration(...)` with the same limits; a shorter duration is raised to it).
    /// Slower moves keep the full acceleration and jerk and cruise slower.
    public init(
        start: Double, distance: Double, duration: Double,
        maxVelocity: Double, maxAcceleration: Double, maxJerk: Double
    ) {
        self.start = start
        self.distance = distance
        let d = abs(distance)
        let fastest = Self.fastest(distance: d, maxVelocity: maxVelocity, maxAcceleration: maxAcceleration, maxJerk: maxJerk)
        guard d > 0, fastest.peakVelocity > 0, duration.isFinite else {
            self.duration = duration.isFinite ? max(duration, 0) : 0
            peakVelocity = 0
            peakAcceleration = 0
            jerk = maxJerk
            rampSeconds = 0
            accelerationSeconds = 0
            return
        }
        let total = max(duration, fastest.duration)
        var vp = fastest.peakVelocity
        if total > fastest.duration,
            let v = Self.stretchedReachingMaxAcceleration(
                distance: d, duration: total, maxAcceleration: maxAcceleration, maxJerk: maxJerk), v <= vp
        {
            // Closed form when the stretched move still reaches maxAcceleration (the usual
            // case): T = v/a + a/j + d/v.
            vp = v
        } else if total > fastest.duration {
            // T(v) = tₐ(v) + d/v falls monotonically for 0 < v ≤ the fastest move's speed
            // (as long as the move cruises, d ≥ v·tₐ(v)), so bisection finds the one v that
            // takes `total` seconds. 200 halvings reach the last bit of a Double.
            var lo = 0.0
            var hi = vp
            for _ in 0..<200 {
                let mid = 0.5 * (lo + hi)
                guard mid > lo, mid < hi else { break }
                if Self.accelerationSeconds(velocity: mid, maxAcceleration: maxAcceleration, maxJerk: maxJerk) + d / mid > total {
                    lo = mid
                } else {
                    hi = mid
                }
            }
            vp = hi  // the faster side: cruises a hair longer, never breaks a limit
        }
        self.duration = total
        peakVelocity = vp
        jerk = maxJerk
        if vp * maxJerk >= maxAcceleration * maxAcceleration {
            peakAcceleration = maxAcceleration
            rampSeconds = maxAcceleration / maxJerk
            accelerationSeconds = vp / maxAcceleration + rampSeconds
        } else {
            peakAcceleration = (vp * maxJerk).squareRoot()
            rampSeconds = peakAcceleration / maxJerk
            accelerationSeconds = 2 * rampSeconds
        }
    }

    /// The shortest duration of a rest-to-rest move of `distance` within the limits.
    public static func minimumDuration(
        distance: Double, maxVelocity: Double, maxAcceleration: Double,
        maxJerk: Double
    ) -> Double {
        fastest(distance: abs(distance), maxVelocity: maxVelocity, maxAcceleration: maxAcceleration, maxJerk: maxJerk).duration
    }

    /// The cruise speed of the move of `d` taking `T` seconds if it reaches maxAcceleration:
    /// v²/a − (T − a/j)·v + d = 0, the smaller root (the move cruises), in the stable form
    /// 2d / (B + √(B² − 4d/a)). Nil if that move would not reach maxAcceleration.
    static func stretchedReachingMaxAcceleration(
        distance d: Double, duration T: Double,
        maxAcceleration a: Double, maxJerk j: Double
    ) -> Double? {
        let b = T - a / j
        let discriminant = b * b - 4 * d / a
        guard b > 0, discriminant >= 0 else { return nil }
        let v = 2 * d / (b + discriminant.squareRoot())
        guard v.isFinite, v > 0, v * j >= a * a else { return nil }
        return v
    }

    /// Seconds from rest to `velocity` at full acceleration and jerk.
    @inline(__always)
    static func accelerationSeconds(velocity v: Double, maxAcceleration a: Double, maxJerk j: Double) -> Double {
        v * j >= a * a ? v / a + a / j : 2 * (v / j).squareRoot()
    }

    /// The time-optimal move's peak speed and duration for a distance `d` ≥ 0.
    static func fastest(
        distance d: Double, maxVelocity vmax: Double, maxAcceleration a: Double,
        maxJerk j: Double
    ) -> (peakVelocity: Double, duration: Double) {
        guard d > 0, vmax > 0, a > 0, j > 0 else { return (0, 0) }
        let taMax = accelerationSeconds(velocity: vmax, maxAcceleration: a, maxJerk: j)
        if vmax * taMax <= d { return (vmax, taMax + d / vmax) }
        // No cruise: speeding up and slowing down cover d, v·tₐ(v) = d.
        // Without reaching a: 2·v^1.5/√j = d.
        var v = cbrt(d * j.squareRoot() / 2)
        v *= v
        if v * j > a * a {
            // Reaching a: v²/a + v·a/j = d.
            let b = a * a / j
            v = (-b + (b * b + 4 * a * d).squareRoot()) / 2
        }
        v = min(v, vmax)
        return (v, 2 * accelerationSeconds(velocity: v, maxAcceleration: a, maxJerk: j))
    }

    /// Distance covered `t` seconds after leaving rest (0 ≤ t ≤ accelerationSeconds).
    @inline(__always)
    func speedingUp(_ t: Double) -> Double {
        let tj = rampSeconds
        let j = jerk
        if t <= tj { return j * t * t * t / 6 }
        let ta = accelerationSeconds
        if t <= ta - tj {
            let u = t - tj
            return j * tj * tj * tj / 6 + 0.5 * peakAcceleration * tj * u + 0.5 * peakAcceleration * u * u
        }
        // The velocity curve is point-symmetric about its middle: v(t) = vp − v(tₐ − t).
        let r = ta - t
        return peakVelocity * (t - 0.5 * ta) + j * r * r * r / 6
    }

    /// Position at `t` seconds after the start (clamped to the move).
    @inline(__always)
    public func position(at t: Double) -> Double {
        if t >= duration { return start + distance }
        if peakVelocity == 0 || t <= 0 { return start }
        let sign: Double = distance < 0 ? -1 : 1
        let ta = accelerationSeconds
        let travelled: Double
        if t <= ta {
            travelled = speedingUp(t)
        } else if t < duration - ta {
            travelled = peakVelocity * (0.5 * ta + (t - ta))
        } else {
            travelled = abs(distance) - speedingUp(duration - t)
        }
        return start + sign * travelled
    }
}
