import FoundationEssentials
import Glibc
import RigCore
import RigFormat

/// Builds SVG text: escaping, compact numbers, and the few elements a plot needs.
struct SVGWriter {
    private(set) var text = ""

    mutating func line(_ s: String) {
        text += s
        text += "\n"
    }

    /// A coordinate to 0.1 px (enough for a plot, and keeps the file small).
    static func px(_ x: Double) -> String {
        guard x.isFinite else { return "0" }
        let r = (x * 10).rounded() / 10
        if r == 0 || !r.isFinite { return "0" }
        return format(r)
    }

    /// A value for a tick label: `step` decides how many decimals it needs.
    static func label(_ value: Double, step: Double) -> String {
        // Clamped as a Double first: a zero or non-finite step makes log10 infinite.
        let wanted = (-log10(step)).rounded(.up)
        let decimals = wanted.isNaN ? 0 : Int(min(6, max(0, wanted)))
        let r = fixed(value, decimals)
        return Double(r) == 0 ? "0" : r
    }
}

/// Round tick positions covering `low…high`: steps of 1, 2 or 5 × 10ⁿ, about `count` of them.
func niceTicks(_ low: Double, _ high: Double, count: Int = 6) -> (values: [Double], step: Double) {
    let span = high - low
    guard span > 0, span.isFinite else { return ([low], 1) }
    let raw = span / Double(count)
    let magnitude = pow(10, (log10(raw)).rounded(.down))
    let step = [1.0, 2, 5, 10].map { $0 * magnitude }.first { $0 >= raw } ?? 10 * magnitude
    var values: [Double] = []
    var v = (low / step).rounded(.up) * step
    while v <= high + step * 1e-9 {
        values.append(v)
        v += step
    }
    return (values, step)
}
