import Glibc
import RigFormat

/// What an axis carries, as a spring (`"payload"`): the camera on a hobby servo is a mass
/// on a springy horn and bracket that rings after every move at its natural frequency,
/// dying away at its damping ratio. The simulated output rings with it; `rig calibrate
/// resonance` measures it.
public struct Payload: Sendable, Equatable {
    /// The natural frequency of the axis's lowest mode, Hz.
    public var frequencyHz: Double
    /// The damping ratio ζ (0: rings forever; a camera on a servo head is about 0.02–0.1).
    public var damping: Double

    public static let frequencyRangeHz: ClosedRange<Double> = 0.5...50
    public static let dampingRange: ClosedRange<Double> = 0...0.7

    public init(frequencyHz: Double, damping: Double) {
        self.frequencyHz = frequencyHz
        self.damping = damping
    }

    /// Reads `{"frequencyHz": F, "damping": Z}` (the shape `"payload"` and `"shaper"` share).
    static func parseMode(_ object: ObjectReader) throws(FileError) -> Payload {
        let frequency = try object.required("frequencyHz", "the natural frequency in Hz").number(in: frequencyRangeHz, unit: "Hz")
        let damping = try object.optional("damping")?.number(in: dampingRange) ?? 0.05
        return Payload(frequencyHz: frequency, damping: damping)
    }

    public static func parse(_ value: ValueReader) throws(FileError) -> Payload {
        let object = try value.object()
        let payload = try parseMode(object)
        try object.finish()
        return payload
    }

    /// The damped period of the ringing, seconds: 1 / (f·√(1−ζ²)).
    public var dampedPeriodSeconds: Double { 1 / (frequencyHz * (1 - damping * damping).squareRoot()) }

    /// How long a ringing of `amplitudeDegrees` takes until its rate's envelope
    /// (amplitude·ω·e^(−ζωt)) falls below `rate` °/s, seconds: 0 if it starts below,
    /// infinite without damping. A measured settle's timeout sized to the payload: one
    /// output count's step rings this long before the camera is still enough.
    public func ringDownSeconds(amplitudeDegrees: Double, belowDegreesPerSecond rate: Double) -> Double {
        let w = 2 * Double.pi * frequencyHz
        let peak = amplitudeDegrees * w
        guard peak > rate else { return 0 }
        guard damping > 0 else { return .infinity }
        return log(peak / rate) / (damping * w)
    }
}

/// How a hobby servo falls short of its command (`"deadbandDeg"`, `"lagSeconds"` on a
/// servo axis): the simulated output models both.
public struct ServoImperfection: Sendable, Equatable {
    /// The servo does not correct an error smaller than half of this, degrees (its
    /// deadband: 0.3–0.45° on typical hobby servos, more on cheap ones).
    public var deadbandDeg = 0.0
    /// From a pulse to the horn starting to answer it, seconds.
    public var lagSeconds = 0.0

    public static let deadbandRangeDeg: ClosedRange<Double> = 0...5
    public static let lagRangeSeconds: ClosedRange<Double> = 0...0.5

    public init(deadbandDeg: Double = 0, lagSeconds: Double = 0) {
        self.deadbandDeg = deadbandDeg
        self.lagSeconds = lagSeconds
    }
}
