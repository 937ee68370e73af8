/// Velocity jogging: each tick every axis's velocity moves toward its target velocity
/// by at most its maxAcceleration · dt (targets are clamped to maxVelocity), and the
/// position integrates it. Targets near a soft limit are capped by the braking curve, so
/// an axis slows to rest at the limit; the limiter after it stays the guarantee, and
/// `follow` takes back what it made of the frame. Pure, no
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
            let vmax = axes[i].maxVelocity
            let dv = axes[i].maxAcceleration * dt
            // Ask for no more than the braking curve before each soft limit allows (the
            // limiter's own envelope, floored at zero): the axis glides to rest at a limit
            // instead of buzzing against it.
            let a = axes[i].maxAcceleration
            let margin = Self.limitMargin(a: a, dt: dt)
            let toMax = max(0, axes[i].softMax - margin - positions[i])
            let toMin = max(0, positions[i] - axes[i].softMin - margin)
            let high = min(vmax, max(0, (2 * a * toMax).squareRoot() - a * dt / 2))
            let low = max(-vmax, -max(0, (2 * a * toMin).squareRoot() - a * dt / 2))
            let target = min(max(targetVelocities[i], low), high)
            let v0 = velocities[i]
            let v = v0 + min(max(target - v0, -dv), dv)
            velocities[i] = v
            positions[i] += v * dt
        }
    }

    /// How far short of a soft limit jogging comes to rest: the `MotionLimiter`'s braking
    /// envelope (√(2ad) − a·dt/2) is negative closer than a·dt²/8 to a limit, so an axis
    /// resting nearer would be pushed off it every tick. With slack: 1.5 × a·dt²/8
    /// (0.0015° at 100 Hz and 80°/s²).
    @inline(__always)
    public static func limitMargin(a: Double, dt: Double) -> Double { 1.5 * a * dt * dt / 8 }

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
