/// Which limit a frame broke.
public enum Limit: String, Sendable, Equatable {
    case softMin = "soft limit (min)"
    case softMax = "soft limit (max)"
    case velocity = "maxVelocity"
    case acceleration = "maxAcceleration"
    /// Checked on planned moves only (`LimitMonitor.observe(_:checkingJerk:)`).
    case jerk = "maxJerk"
}

/// One frame of one axis beyond a limit.
public struct LimitViolation: Sendable, Equatable {
    public var axis: Int
    public var limit: Limit
    /// The position, |velocity|, |acceleration| or |jerk| the frame had.
    public var value: Double
    /// The limit it broke.
    public var allowed: Double
}

/// How close an axis came to its limits over a run.
public struct AxisMargins: Sendable, Equatable {
    public var minPosition = Double.infinity
    public var maxPosition = -Double.infinity
    public var peakVelocity = 0.0
    public var peakAcceleration = 0.0
    /// The largest |jerk| among the frames checked for jerk (planned moves).
    public var peakJerk = 0.0
}

/// Watches emitted frames: soft limits, and velocity, acceleration and (on planned moves)
/// jerk as finite differences at the tick rate, which is what the servo actually sees.
///
/// Jerk is the third difference over four frames; it is judged only when all four were
/// observed with `checkingJerk` (or are the rest before the start pose), so the seam
/// between a keyframe path and a planned move is not blamed on the move.
public struct LimitMonitor: Sendable {
    public let axes: [Axis]
    public let tickSeconds: Double
    public private(set) var margins: [AxisMargins]
    private var last: [Double]
    private var lastVelocity: [Double]
    private var lastAcceleration: [Double]
    /// Consecutive frames observed with `checkingJerk`, the start pose's rest counting 3.
    private var jerkFrames = 3
    /// Room for quantization and floating-point rounding.
    public static let relativeTolerance = 1e-6

    public init(axes: [Axis], tickSeconds: Double, startPose: [Double]) {
        self.axes = axes
        self.tickSeconds = tickSeconds
        margins = [AxisMargins](repeating: AxisMargins(), count: axes.count)
        last = startPose.map { $0 }  // own storage: the first observe() must not copy on write
        lastVelocity = [Double](repeating: 0, count: axes.count)
        lastAcceleration = [Double](repeating: 0, count: axes.count)
    }

    /// The largest finite-difference jerk accepted: maxJerk with the relative tolerance,
    /// plus the rounding of a third difference of positions, 32 units in the last place of
    /// the largest position over dt³ (at 1 kHz and ±180°: 9·10⁻⁴ °/s³; at 100 Hz: 10⁻⁶).
    @inline(__always)
    public static func allowedJerk(_ axis: Axis, tickSeconds dt: Double) -> Double {
        let magnitude = max(abs(axis.softMin), abs(axis.softMax), 1)
        return axis.maxJerk * (1 + relativeTolerance) + 32 * magnitude.ulp / (dt * dt * dt)
    }

    /// Records a frame; returns the first limit it breaks on any axis, if any.
    /// - Parameter checkingJerk: true for frames of planned moves (S-curves) and rest,
    ///   false (the default) for keyframe paths and jogging, whose jerk is the user's.
    @inline(__always)
    public mutating func observe(_ positions: [Double], checkingJerk: Bool = false) -> LimitViolation? {
        var first: LimitViolation?
        observeEach(positions, checkingJerk: checkingJerk) { if first == nil { first = $0 } }
        return first
    }

    /// Records a frame and calls `body` for every limit it breaks: per axis, at most one
    /// soft limit, and the velocity, acceleration and (if judged) jerk limit each.
    @inline(__always)
    public mutating func observeEach(_ positions: [Double], checkingJerk: Bool = false, _ body: (LimitViolation) -> Void) {
        jerkFrames = checkingJerk ? min(jerkFrames + 1, 4) : 0
        let judgeJerk = jerkFrames >= 4
        for i in axes.indices {
            let axis = axes[i]
            let x = positions[i]
            let v = (x - last[i]) / tickSeconds
            let a = (v - lastVelocity[i]) / tickSeconds
            let j = (a - lastAcceleration[i]) / tickSeconds
            last[i] = x
            lastVelocity[i] = v
            lastAcceleration[i] = a
            if judgeJerk { margins[i].peakJerk = max(margins[i].peakJerk, abs(j)) }
            margins[i].minPosition = min(margins[i].minPosition, x)
            margins[i].maxPosition = max(margins[i].maxPosition, x)
            margins[i].peakVelocity = max(margins[i].peakVelocity, abs(v))
            margins[i].peakAcceleration = max(margins[i].peakAcceleration, abs(a))
            let span = axis.softMax - axis.softMin
            if x < axis.softMin - span * Self.relativeTolerance {
                body(LimitViolation(axis: i, limit: .softMin, value: x, allowed: axis.softMin))
            } else if x > axis.softMax + span * Self.relativeTolerance {
                body(LimitViolation(axis: i, limit: .softMax, value: x, allowed: axis.softMax))
            }
            if abs(v) > axis.maxVelocity * (1 + Self.relativeTolerance) {
                body(LimitViolation(axis: i, limit: .velocity, value: abs(v), allowed: axis.maxVelocity))
            }
            if abs(a) > axis.maxAcceleration * (1 + Self.relativeTolerance) {
                body(LimitViolation(axis: i, limit: .acceleration, value: abs(a), allowed: axis.maxAcceleration))
            }
            if judgeJerk, abs(j) > Self.allowedJerk(axis, tickSeconds: tickSeconds) {
                body(LimitViolation(axis: i, limit: .jerk, value: abs(j), allowed: axis.maxJerk))
            }
        }
    }
}
