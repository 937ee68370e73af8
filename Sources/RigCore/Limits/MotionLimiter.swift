/// The last line of defence before an output: bends a frame so that no axis leaves its
/// soft limits or exceeds its velocity or acceleration, braking early enough to stop at
/// a soft limit. Programs that `check` accepted never need it; jogging relies on it.
public struct MotionLimiter: Sendable {
    public let axes: [Axis]
    public let tickSeconds: Double
    public private(set) var positions: [Double]
    public private(set) var velocities: [Double]

    public init(axes: [Axis], tickSeconds: Double, startPose: [Double]) {
        self.axes = axes
        self.tickSeconds = tickSeconds
        positions = startPose.map { $0 }  // own storage: the first limit() must not copy on write
        velocities = [Double](repeating: 0, count: axes.count)
    }

    /// Limits `frame` in place. Returns the first axis that had to be changed beyond
    /// rounding, or nil when the frame was within every limit.
    @inline(__always)
    public mutating func limit(_ frame: inout [Double]) -> Int? {
        var changedAxis: Int?
        var changed = false
        let dt = tickSeconds
        for i in axes.indices {
            let axis = axes[i]
            let a = axis.maxAcceleration
            let x0 = positions[i]
            let v0 = velocities[i]
            let wanted = (frame[i] - x0) / dt
            // Slack for rounding, small against both the velocity limit and one tick's
            // change of velocity, so it cannot let either limit through.
            let tolerance = Self.relativeTolerance * min(axis.maxVelocity, a * dt)
            var low = max(-axis.maxVelocity, v0 - a * dt)
            var high = min(axis.maxVelocity, v0 + a * dt)
            // Keep the braking distance inside the soft limits.
            let toMax = max(0, axis.softMax - x0)
            let toMin = max(0, x0 - axis.softMin)
            high = max(min(high, Self.safeSpeed(distance: toMax, acceleration: a, tickSeconds: dt)), low)
            low = min(max(low, -Self.safeSpeed(distance: toMin, acceleration: a, tickSeconds: dt)), high)
            var v = wanted
            if wanted > high + tolerance || wanted < low - tolerance {
                v = min(max(wanted, low), high)
                changed = true
            }
            var x = x0 + v * dt
            let span = (axis.softMax - axis.softMin) * Self.relativeTolerance
            if x > axis.softMax + span || x < axis.softMin - span { changed = true }
            if x > axis.softMax {
                x = axis.softMax
                v = (x - x0) / dt
            }
            if x < axis.softMin {
                x = axis.softMin
                v = (x - x0) / dt
            }
            frame[i] = x
            positions[i] = x
            velocities[i] = v
            if changed, changedAxis == nil { changedAxis = i }
            changed = false
        }
        return changedAxis
    }

    public static let relativeTolerance = 1e-6

    /// The fastest an axis may move this tick towards a limit `distance` away and still
    /// stop before it, braking by `acceleration · tickSeconds` per tick.
    ///
    /// The velocity a frame carries is the average over its tick, so braking from `v`
    /// covers at most (v + a·dt/2)²/2a: √(2ad) − a·dt/2 is always safe. Within a·dt²/8 of
    /// the limit that bound turns negative and would push the axis away from a target
    /// resting there, so it jitters; but a speed the axis can drop to zero from in one tick
    /// (v ≤ a·dt) only needs v·dt ≤ d, which allows holding still.
    @inline(__always)
    static func safeSpeed(distance d: Double, acceleration a: Double, tickSeconds dt: Double) -> Double {
        max((2 * a * d).squareRoot() - a * dt / 2, min(d / dt, a * dt))
    }

    /// The rig stood still where it is (the loop stalled): velocities are zero, so what
    /// follows starts from rest within the acceleration limits.
    public mutating func rest() {
        for i in velocities.indices { velocities[i] = 0 }
    }

    /// The last frame reached the output `1 / fraction` ticks late (a stall): the rig
    /// moved at `fraction` of the velocity the frame carries, so that is what the next
    /// frame must continue from.
    public mutating func scaleVelocities(by fraction: Double) {
        let f = min(max(fraction, 0), 1)
        for i in velocities.indices { velocities[i] *= f }
    }

    /// Follows a frame that was emitted without limiting (keeps the state in step).
    public mutating func follow(_ frame: [Double]) {
        for i in axes.indices {
            velocities[i] = (frame[i] - positions[i]) / tickSeconds
            positions[i] = frame[i]
        }
    }
}
