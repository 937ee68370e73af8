import RigFormat

/// Maps an axis position (degrees) to a servo pulse width (µs) and back, piecewise
/// linearly through two or more measured points.
public struct Calibration: Sendable, Equatable {
    /// Points sorted by angle; pulses strictly monotonic (rising or falling).
    public let angles: [Double]
    public let pulses: [Double]

    /// - Precondition: checked by the caller (`Calibration.make`), which reports errors.
    init(angles: [Double], pulses: [Double]) {
        self.angles = angles
        self.pulses = pulses
    }

    /// Builds a calibration from points, or says what is wrong with them.
    public static func make(points: [(angleDeg: Double, pulseMicroseconds: Double)], inverted: Bool) -> Result<Calibration, CalibrationProblem> {
        guard points.count >= 2 else { return .failure(.tooFewPoints) }
        let sorted = points.sorted { $0.angleDeg < $1.angleDeg }
        for i in 1..<sorted.count where sorted[i].angleDeg == sorted[i - 1].angleDeg {
            return .failure(.duplicateAngle(sorted[i].angleDeg))
        }
        var pulses = sorted.map(\.pulseMicroseconds)
        if inverted {
            let low = pulses.min() ?? 0
            let high = pulses.max() ?? 0
            pulses = pulses.map { low + high - $0 }
        }
        let rising = pulses[1] > pulses[0]
        for i in 1..<pulses.count where (pulses[i] > pulses[i - 1]) != rising || pulses[i] == pulses[i - 1] {
            return .failure(.notMonotonic)
        }
        return .success(Calibration(angles: sorted.map(\.angleDeg), pulses: pulses))
    }

    public var angleRange: ClosedRange<Double> { angles[0]...angles[angles.count - 1] }

    /// Pulse width for an angle; outside the table the end segments extend linearly.
    @inline(__always)
    public func pulseMicroseconds(forAngle angle: Double) -> Double {
        var i = 1
        let last = angles.count - 1
        while i < last, angle > angles[i] { i += 1 }
        let a0 = angles[i - 1]
        let a1 = angles[i]
        let p0 = pulses[i - 1]
        let p1 = pulses[i]
        return p0 + (angle - a0) * (p1 - p0) / (a1 - a0)
    }

    /// The angle a pulse width stands for (the inverse of `pulseMicroseconds(forAngle:)`).
    public func angle(forPulseMicroseconds pulse: Double) -> Double {
        let rising = pulses[1] > pulses[0]
        var i = 1
        let last = pulses.count - 1
        while i < last, rising ? pulse > pulses[i] : pulse < pulses[i] { i += 1 }
        let a0 = angles[i - 1]
        let a1 = angles[i]
        let p0 = pulses[i - 1]
        let p1 = pulses[i]
        return a0 + (pulse - p0) * (a1 - a0) / (p1 - p0)
    }
}

public enum CalibrationProblem: Error, Sendable, Equatable, CustomStringConvertible {
    case tooFewPoints
    case duplicateAngle(Double)
    case notMonotonic

    public var description: String {
        switch self {
        case .tooFewPoints: "a calibration needs at least 2 points"
        case .duplicateAngle(let a): "two calibration points share the angle \(format(a))"
        case .notMonotonic: "pulse widths must rise (or fall) strictly with the angle"
        }
    }
}
