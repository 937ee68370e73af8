import FoundationEssentials
import Glibc

/// How a keyframe segment moves from its key to the next one.
public enum Interpolation: Sendable, Equatable {
    /// Stay at the key's value until the next key (a jump there: only feasible when the
    /// next key has the same value).
    case hold
    case linear
    /// Monotone cubic (Fritsch–Carlson): never overshoots its keys, velocity continuous
    /// across neighbouring smooth segments. The default.
    case smooth
    /// A CSS-style timing curve through (0,0), (x1,y1), (x2,y2), (1,1) in the segment's
    /// normalized time and value. x1, x2 lie in 0…1 so time never runs backwards.
    case bezier(x1: Double, y1: Double, x2: Double, y2: Double)
    case ease(Easing)

    public static let names: [String] = ["hold", "linear", "smooth", "bezier"] + Easing.names

    /// Parses an interpolation name (bezier handles are read separately).
    public init?(name: String) {
        switch name {
        case "hold": self = .hold
        case "linear": self = .linear
        case "smooth": self = .smooth
        default:
            guard let easing = Easing(name: name) else { return nil }
            self = .ease(easing)
        }
    }

    /// Progress 0…1 (may leave 0…1 for bezier handles outside it) at normalized time `u`.
    /// Not used for `.smooth`, which needs tangents.
    @inline(__always)
    func progress(_ u: Double) -> Double {
        switch self {
        case .hold: return 0
        case .linear, .smooth: return u
        case .bezier(let x1, let y1, let x2, let y2): return cubicBezier(u, x1, y1, x2, y2)
        case .ease(let easing): return easing.progress(u)
        }
    }
}

/// The standard easings (easings.net names): in, out, inOut of sine, quad and cubic.
public struct Easing: Sendable, Equatable {
    public enum Curve: String, Sendable, CaseIterable {
        case sine = "Sine"
        case quad = "Quad"
        case cubic = "Cubic"
    }
    public enum Mode: String, Sendable, CaseIterable { case easeIn, easeOut, easeInOut }
    public var mode: Mode
    public var curve: Curve

    public static let names: [String] = Mode.allCases.flatMap { m in Curve.allCases.map { m.rawValue + $0.rawValue } }

    public init(mode: Mode, curve: Curve) {
        self.mode = mode
        self.curve = curve
    }

    public init?(name: String) {
        for mode in Mode.allCases where name.hasPrefix(mode.rawValue) {
            let rest = String(name.dropFirst(mode.rawValue.count))
            // "easeIn" is a prefix of "easeInOut": take the longest match.
            if mode == .easeIn, rest.hasPrefix("Out") { continue }
            if let curve = Curve(rawValue: rest) {
                self.init(mode: mode, curve: curve)
                return
            }
        }
        return nil
    }

    @inline(__always)
    func progress(_ u: Double) -> Double {
        switch mode {
        case .easeIn: return easeIn(u)
        case .easeOut: return 1 - easeIn(1 - u)
        case .easeInOut: return u < 0.5 ? easeIn(2 * u) / 2 : 1 - easeIn(2 - 2 * u) / 2
        }
    }

    @inline(__always)
    private func easeIn(_ u: Double) -> Double {
        switch curve {
        case .sine: return 1 - cos(u * Double.pi / 2)
        case .quad: return u * u
        case .cubic: return u * u * u
        }
    }
}

/// y on the cubic Bézier timing curve at x = `u`, solving for the curve parameter.
@inline(__always)
func cubicBezier(_ u: Double, _ x1: Double, _ y1: Double, _ x2: Double, _ y2: Double) -> Double {
    if u <= 0 { return 0 }
    if u >= 1 { return 1 }
    // x(s) is monotone for x1, x2 in 0…1: bisection is robust, Newton speeds it up.
    func x(_ s: Double) -> Double {
        let r = 1 - s
        return 3 * r * r * s * x1 + 3 * r * s * s * x2 + s * s * s
    }
    func dx(_ s: Double) -> Double {
        let r = 1 - s
        return 3 * r * r * x1 + 6 * r * s * (x2 - x1) + 3 * s * s * (1 - x2)
    }
    var lo = 0.0
    var hi = 1.0
    var s = u
    for _ in 0..<24 {
        let err = x(s) - u
        if abs(err) < 1e-12 { break }
        if err > 0 { hi = s } else { lo = s }
        let d = dx(s)
        var next = d > 1e-9 ? s - err / d : (lo + hi) / 2
        if next <= lo || next >= hi { next = (lo + hi) / 2 }
        s = next
    }
    let r = 1 - s
    return 3 * r * r * s * y1 + 3 * r * s * s * y2 + s * s * s
}
