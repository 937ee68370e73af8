/// Which limit a frame broke.
public enum Limit: String, Sendable, Equatable {
    case softMin = "soft limit (min)"
    case softMax = "soft limit (max)"
    case velocity = "maxVelocity"
    case acceleration = "maxAcceleration"
}

/// One frame of one axis beyond a limit.
public struct LimitViolation: Sendable, Equatable {
    public var axis: Int
    public var limit: Limit
    /// The position, |velocity| or |acceleration| the frame had.
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
}

/// Watches emitted frames: soft limits, and velocity and acceleration as finite
/// differences at the tick rate, which is what the servo actually sees.
public struct LimitMonitor: Sendable {
    public let axes: [Axis]
    public let tickSeconds: Double
    public private(set) var margins: [AxisMargins]
    private var last: [Double]
    private var lastVelocity: [Double]
    /// Room for quantization and floating-point rounding.
    public static let relativeTolerance = 1e-6

    public init(axes: [Axis], tickSeconds: Double, startPose: [Double]) {
        self.axes = axes
        self.tickSeconds = tickSeconds
        margins = [AxisMargins](repeating: AxisMargins(), count: axes.count)
        last = startPose.map { $0 }  // own storage: the first observe() must not copy on write
        lastVelocity = [Double](repeating: 0, count: axes.count)
    }

    /// Records a frame; returns the first limit it breaks on any axis, if any.
    @inline(__always)
    public mutating func observe(_ positions: [Double]) -> LimitViolation? {
        var first: LimitViolation?
        observeEach(positions) { if first == nil { first = $0 } }
        return first
    }

    /// Records a frame and calls `body` for every limit it breaks: per axis, at most one
    /// soft limit, and the velocity and the acceleration limit each.
    @inline(__always)
    public mutating func observeEach(_ positions: [Double], _ body: (LimitViolation) -> Void) {
        for i in axes.indices {
            let axis = axes[i]
            let x = positions[i]
            let v = (x - last[i]) / tickSeconds
            let a = (v - lastVelocity[i]) / tickSeconds
            last[i] = x
            lastVelocity[i] = v
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
        }
    }
}
