import RigCore

/// Velocity jogging: each tick every axis's velocity moves toward its target velocity
/// by at most its maxAcceleration · dt (targets are clamped to maxVelocity), and the
/// position integrates it. Soft limits are the limiter's job (it brakes early enough to
/// stop at them); `follow` takes back what the limiter made of the frame. Pure, no
/// allocation after init.
public struct JogController: Sendable {
    public let axes: [Axis]
    public let tickSeconds: Double
    public private(set) var velocities: [Double]

    public init(axes: [Axis], tickSeconds: Double) {
        self.axes = axes
        self.tickSeconds = tickSeconds
        velocities = [Double](repeating: 0, count: axes.count)
    }

    /// Advances `positions` by one tick toward `targetVelocities` (units per second).
    @inline(__always)
    public mutating func step(targetVelocities: [Double], positions: inout [Double]) {
        let dt = tickSeconds
        for i in axes.indices {
            let vmax = axes[i].maxVelocity, dv = axes[i].maxAcceleration * dt
            let target = min(max(targetVelocities[i], -vmax), vmax)
            let v0 = velocities[i]
            let v = v0 + min(max(target - v0, -dv), dv)
            velocities[i] = v
            positions[i] += v * dt
        }
    }

    /// Adopts the velocities of the frame actually emitted (after the limiter, or a
    /// planned move).
    @inline(__always)
    public mutating func follow(velocities emitted: [Double]) {
        for i in axes.indices { velocities[i] = emitted[i] }
    }

    /// Every axis is still.
    public var isAtRest: Bool {
        for i in axes.indices where abs(velocities[i]) > axes[i].maxVelocity * 1e-9 { return false }
        return true
    }
}
