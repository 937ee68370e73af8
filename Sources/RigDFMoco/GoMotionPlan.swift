import RigCore
import RigFormat

/// A go-motion (`bf`) move as timed paths: each listed axis rests at its start, reaches
/// speed in exactly `rampSeconds`, passes `p1 − (p1 − p0)·b` as the shutter opens, `p1`
/// half the exposure later, `p1 + (p2 − p1)·b` as it closes, then slows to rest.
///
/// Time 0 is the `go`. The ramp is a constant acceleration and the slow-down a constant
/// deceleration (at most 90 % of maxAcceleration, at least as long as the ramp, at most
/// `longestSlowDownSeconds`); the two
/// exposure halves are cubic Hermite segments, so the velocity is continuous everywhere
/// and the three positions are met exactly.
public struct GoMotionPlan: Sendable, Equatable {
    public static let rampSeconds = 1.0
    public static let longestSlowDownSeconds = 10.0

    /// One track per rig axis; nil where the axis stays put.
    public var tracks: [AxisTrack?]
    /// Where each listed axis waits for `go` (nil: not in the move).
    public var startPose: [Double?]
    /// Seconds after `go`.
    public var exposureStartSeconds: Double
    public var exposureEndSeconds: Double
    /// Problems the rig's limits will not let pass unchanged (the limiter bends the move
    /// and the exposure is not where Dragonframe expects it).
    public var warnings: [String]

    public struct Motion: Sendable, Equatable {
        public var axis: Int
        public var previous: Double
        public var current: Double
        public var next: Double

        public init(axis: Int, previous: Double, current: Double, next: Double) {
            self.axis = axis
            self.previous = previous
            self.current = current
            self.next = next
        }
    }

    /// - Parameters:
    ///   - motions: per axis, the previous, current and next frame's position (degrees or %).
    ///   - blurFraction: 0…1 (DFMoco's blur / 1000).
    public init(rig: Rig, motions: [Motion], exposureSeconds: Double, blurFraction: Double) {
        let exposure = max(exposureSeconds, rig.tickSeconds)
        let b = min(max(blurFraction, 0), 1)
        let ramp = Self.rampSeconds
        let half = exposure / 2
        tracks = [AxisTrack?](repeating: nil, count: rig.axes.count)
        startPose = [Double?](repeating: nil, count: rig.axes.count)
        exposureStartSeconds = ramp
        exposureEndSeconds = ramp + exposure
        warnings = []
        for m in motions where rig.axes.indices.contains(m.axis) {
            let axis = rig.axes[m.axis]
            let opens = m.current - (m.current - m.previous) * b
            let closes = m.current + (m.next - m.current) * b
            let v0 = (m.current - opens) / half
            let v1 = (closes - m.current) / half
            // Fritsch–Butland at the middle key: monotone where the path is, still at a turn.
            let vMid = v0 * v1 > 0 ? 2 * v0 * v1 / (v0 + v1) : 0
            let start = opens - v0 * ramp / 2
            // Capped: a slow-down longer than that only comes from a move the limits refuse
            // anyway (and is warned about), and the check below samples every tick of it.
            let down = min(max(ramp, abs(v1) / (0.9 * axis.maxAcceleration)), Self.longestSlowDownSeconds)
            let end = closes + v1 * down / 2
            let keys = [
                Keyframe(time: 0, value: start), Keyframe(time: ramp, value: opens),
                Keyframe(time: ramp + half, value: m.current), Keyframe(time: ramp + exposure, value: closes),
                Keyframe(time: ramp + exposure + down, value: end),
            ]
            let track = AxisTrack(keys: keys, tangents: [0, v0, vMid, v1, 0])
            tracks[m.axis] = track
            startPose[m.axis] = start
            warnings += Self.check(track, axis: axis, tickSeconds: rig.tickSeconds)
        }
    }

    /// What the limits would change: positions outside the soft limits, speeds over
    /// maxVelocity, accelerations over maxAcceleration (sampled at the loop rate).
    static func check(_ track: AxisTrack, axis: Axis, tickSeconds dt: Double) -> [String] {
        var warnings: [String] = []
        let ticks = min(tickCount(seconds: track.endTime, tickSeconds: dt), 10_000_000)
        var cursor = 0
        var x0 = track.value(at: 0, cursor: &cursor)
        var v0 = 0.0
        var low = x0
        var high = x0
        var vMax = 0.0
        var aMax = 0.0
        for k in 0...ticks {
            let x = track.value(at: Double(k + 1) * dt, cursor: &cursor)
            let v = (x - x0) / dt
            low = min(low, x)
            high = max(high, x)
            vMax = max(vMax, abs(v))
            aMax = max(aMax, abs(v - v0) / dt)
            x0 = x
            v0 = v
        }
        let u = axis.unit
        if low < axis.softMin - 1e-9 || high > axis.softMax + 1e-9 {
            warnings.append(
                "axis \"\(axis.name)\" would travel \(short(low))…\(short(high))\(u), beyond its soft limits \(short(axis.softMin))…\(short(axis.softMax))\(u)")
        }
        if vMax > axis.maxVelocity * (1 + 1e-6) {
            warnings.append("axis \"\(axis.name)\" would need \(short(vMax))\(u)/s; its maxVelocity is \(short(axis.maxVelocity))\(u)/s")
        }
        if aMax > axis.maxAcceleration * (1 + 1e-6) {
            warnings.append("axis \"\(axis.name)\" would need \(short(aMax))\(u)/s²; its maxAcceleration is \(short(axis.maxAcceleration))\(u)/s²")
        }
        return warnings
    }
}

/// A number for a log line: at most three decimals.
func short(_ value: Double) -> String {
    format((value * 1000).rounded() / 1000)
}
