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
            let x0 = positions[i], v0 = velocities[i]
            let wanted = (frame[i] - x0) / dt
            let tolerance = Self.relativeTolerance * axis.maxVelocity
            var low = max(-axis.maxVelocity, v0 - a * dt)
            var high = min(axis.maxVelocity, v0 + a * dt)
            // Keep the braking distance inside the soft limits. The velocity a frame
            // carries is the average over its tick, so an axis braking at `a` to stop
            // exactly at a limit `d` away moves at most √(2ad) − a·dt/2 this tick.
            let toMax = max(0, axis.softMax - x0), toMin = max(0, x0 - axis.softMin)
            let reachMax = max(0, (2 * a * toMax).squareRoot() - a * dt / 2)
            let reachMin = max(0, (2 * a * toMin).squareRoot() - a * dt / 2)
            high = max(min(high, reachMax), low)
            low = min(max(low, -reachMin), high)
            var v = wanted
            if wanted > high + tolerance || wanted < low - tolerance {
                v = min(max(wanted, low), high)
                changed = true
            }
            var x = x0 + v * dt
            let span = (axis.softMax - axis.softMin) * Self.relativeTolerance
            if x > axis.softMax + span || x < axis.softMin - span { changed = true }
            if x > axis.softMax { x = axis.softMax; v = (x - x0) / dt }
            if x < axis.softMin { x = axis.softMin; v = (x - x0) / dt }
            frame[i] = x
            positions[i] = x
            velocities[i] = v
            if changed, changedAxis == nil { changedAxis = i }
            changed = false
        }
        return changedAxis
    }

    public static let relativeTolerance = 1e-6

    /// Follows a frame that was emitted without limiting (keeps the state in step).
    public mutating func follow(_ frame: [Double]) {
        for i in axes.indices {
            velocities[i] = (frame[i] - positions[i]) / tickSeconds
            positions[i] = frame[i]
        }
    }
}
