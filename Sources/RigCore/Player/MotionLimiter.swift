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
        positions = startPose
        velocities = [Double](repeating: 0, count: axes.count)
    }

    /// Limits `frame` in place. Returns true if any axis had to be changed.
    @inline(__always)
    public mutating func limit(_ frame: inout [Double]) -> Bool {
        var changed = false
        let dt = tickSeconds
        for i in axes.indices {
            let axis = axes[i]
            let a = axis.maxAcceleration
            let x0 = positions[i], v0 = velocities[i]
            let wanted = (frame[i] - x0) / dt
            var low = max(-axis.maxVelocity, v0 - a * dt)
            var high = min(axis.maxVelocity, v0 + a * dt)
            // Keep the braking distance (discrete: v²/2a + 1.5·v·dt) inside the limits.
            let toMax = max(0, axis.softMax - x0), toMin = max(0, x0 - axis.softMin)
            let reachMax = a * (-1.5 * dt + (2.25 * dt * dt + 2 * toMax / a).squareRoot())
            let reachMin = a * (-1.5 * dt + (2.25 * dt * dt + 2 * toMin / a).squareRoot())
            high = max(min(high, reachMax), low)
            low = min(max(low, -reachMin), high)
            var v = min(max(wanted, low), high)
            var x = x0 + v * dt
            if x > axis.softMax { x = axis.softMax; v = (x - x0) / dt }
            if x < axis.softMin { x = axis.softMin; v = (x - x0) / dt }
            if abs(x - frame[i]) > 1e-9 * max(1, abs(frame[i])) { changed = true }
            frame[i] = x
            positions[i] = x
            velocities[i] = v
        }
        return changed
    }

    /// Follows a frame that was emitted without limiting (keeps the state in step).
    public mutating func follow(_ frame: [Double]) {
        for i in axes.indices {
            velocities[i] = (frame[i] - positions[i]) / tickSeconds
            positions[i] = frame[i]
        }
    }
}
