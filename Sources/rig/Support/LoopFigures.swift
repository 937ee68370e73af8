import FoundationEssentials
import Glibc
import RigCore
import RigFormat
import RigRuntime

/// What `rig bench loop` reports for one loop: rig's, or the Python reference's.
struct LoopFigures: Decodable, Equatable {
    struct Lateness: Decodable, Equatable {
        var p50: Double
        var p99: Double
        var p999: Double
        var max: Double
    }

    var ticks: Int
    var missed: Int
    /// How long after its deadline the loop woke, in µs.
    var latenessMicroseconds: Lateness
    var cpuMicrosecondsPerTick: Double

    enum CodingKeys: String, CodingKey {
        case ticks, missed
        case latenessMicroseconds = "lateness_us"
        case cpuMicrosecondsPerTick = "cpu_us_per_tick"
    }

    init(ticks: Int, missed: Int, latenessMicroseconds: Lateness, cpuMicrosecondsPerTick: Double) {
        self.ticks = ticks
        self.missed = missed
        self.latenessMicroseconds = latenessMicroseconds
        self.cpuMicrosecondsPerTick = cpuMicrosecondsPerTick
    }

    init(_ result: LoopResult) {
        let stats = result.lateness
        self.init(
            ticks: result.ticks, missed: stats.missedTicks,
            latenessMicroseconds: Lateness(
                p50: stats.percentileMicroseconds(0.5), p99: stats.percentileMicroseconds(0.99),
                p999: stats.percentileMicroseconds(0.999), max: stats.maxMicroseconds),
            cpuMicrosecondsPerTick: result.cpuNanosecondsPerTick / 1_000)
    }

    /// The object `--json` prints for one loop, keys in the documented order.
    var json: String {
        let l = latenessMicroseconds
        return "{\"ticks\": \(ticks), \"missed\": \(missed), \"lateness_us\": {\"p50\": \(number(l.p50)), \"p99\": \(number(l.p99)), "
            + "\"p999\": \(number(l.p999)), \"max\": \(number(l.max))}, \"cpu_us_per_tick\": \(number(cpuMicrosecondsPerTick))}"
    }
}

/// A JSON number with at most three decimals.
func number(_ value: Double) -> String {
    value.isFinite ? rounded(value) : "null"
}

/// The `rig bench loop` report: rig's figures, and the Python loop's beside them.
struct LoopComparison {
    var rateHz: Double
    var seconds: Double
    var rig: LoopFigures
    var python: LoopFigures?

    var json: String {
        var text = "{\"rate_hz\": \(number(rateHz)), \"seconds\": \(number(seconds)), \"rig\": \(rig.json)"
        if let python { text += ", \"python\": \(python.json)" }
        return text + "}"
    }

    /// A small table: one column per loop, and how many times better rig is.
    var table: [String] {
        var rows: [[String]] = [["", "rig"] + (python == nil ? [] : ["python", "python ÷ rig"])]
        func row(_ label: String, _ value: (LoopFigures) -> Double, _ show: (Double) -> String, ratio: Bool = true, capped: Bool = false) {
            var cells = [label, show(value(rig))]
            if let python {
                cells.append(show(value(python)))
                let r = value(rig)
                let p = value(python)
                // A Python percentile at the histogram's cap is a lower bound, and so is the ratio.
                let atLeast = capped && p >= Double(LatencyStats.bucketCount) ? "≥ " : ""
                cells.append(!ratio ? "" : r > 0 ? atLeast + fixed(p / r, 1) + "×" : p > 0 ? "∞" : "—")
            }
            rows.append(cells)
        }
        row("ticks", { Double($0.ticks) }, { fixed($0, 0) }, ratio: false)
        row("missed ticks", { Double($0.missed) }, { fixed($0, 0) }, ratio: false)
        row("lateness p50", { $0.latenessMicroseconds.p50 }, percentile, capped: true)
        row("lateness p99", { $0.latenessMicroseconds.p99 }, percentile, capped: true)
        row("lateness p99.9", { $0.latenessMicroseconds.p999 }, percentile, capped: true)
        row("lateness max", { $0.latenessMicroseconds.max }, microseconds)
        row("CPU per tick", { $0.cpuMicrosecondsPerTick }, microseconds)
        let widths = rows[0].indices.map { c in rows.map { $0[c].count }.max() ?? 0 }
        return rows.map { cells in
            cells.indices.map { c in
                let pad = String(repeating: " ", count: widths[c] - cells[c].count)
                return c == 0 ? cells[c] + pad : pad + cells[c]
            }.joined(separator: "   ")
        }.map { line in String(line.reversed().drop { $0 == " " }.reversed()) }
    }
}

/// A lateness percentile for people: the histogram (rig's and the Python loop's alike)
/// stops at 100 ms, so a percentile there means "100 ms or more".
func percentile(_ value: Double) -> String {
    value >= Double(LatencyStats.bucketCount) ? "≥ 100 ms" : microseconds(value)
}

/// µs for people: "3.2 µs", "87 µs", "1.61 ms", "12.4 ms".
func microseconds(_ value: Double) -> String {
    if value >= 10_000 { return fixed(value / 1_000, 1) + " ms" }
    if value >= 1_000 { return fixed(value / 1_000, 2) + " ms" }
    if value >= 10 { return fixed(value, 0) + " µs" }
    return fixed(value, 1) + " µs"
}
