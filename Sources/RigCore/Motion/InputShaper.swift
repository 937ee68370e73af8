import FoundationEssentials
import Glibc
import RigFormat

/// An input shaper (`"shaper"` on an axis): a handful of impulses whose responses cancel
/// the payload's ringing at one frequency. Klipper's definitions (`shaper_defs.py`), with
/// f the mode's frequency, ζ its damping, t_d = 1/(f·√(1−ζ²)), K = e^(−ζπ/√(1−ζ²)).
public struct ShaperConfig: Sendable, Equatable {
    public enum Kind: String, Sendable, Equatable, CaseIterable {
        /// Zero vibration: two impulses, ½ t_d long; exact at f, sensitive to error.
        case zv
        /// Modified ZV: three impulses, ¾ t_d long; a little more tolerant.
        case mzv
        /// Extra-insensitive (5 % vibration tolerance): three impulses, t_d long; the most
        /// tolerant of a wrong frequency, but it leaves up to 5 % on frequency by design.
        case ei
        /// ZV with a zero derivative: three impulses, t_d long (as EI); nothing left at f
        /// and nearly as tolerant of a wrong one.
        case zvd
    }

    public var kind: Kind
    public var frequencyHz: Double
    public var damping: Double
    /// Whether an output that rounds to counts plays the one-count trim after this axis's
    /// moves (`"trim"`, default true; `CountTrim` says where it can work).
    public var trim = true

    public init(kind: Kind, frequencyHz: Double, damping: Double, trim: Bool = true) {
        self.kind = kind
        self.frequencyHz = frequencyHz
        self.damping = damping
        self.trim = trim
    }

    public static func parse(_ value: ValueReader) throws(FileError) -> ShaperConfig {
        let object = try value.object()
        let kind = Kind(rawValue: try object.required("type", "\"zv\", \"mzv\", \"ei\" or \"zvd\"").oneOf(Kind.allCases.map(\.rawValue))) ?? .zv
        let mode = try Payload.parseMode(object)
        let trim = try object.optional("trim")?.bool() ?? true
        try object.finish()
        return ShaperConfig(kind: kind, frequencyHz: mode.frequencyHz, damping: mode.damping, trim: trim)
    }

    /// The impulses: amplitudes (positive, summing to 1) and their times, seconds.
    public var impulses: [(amplitude: Double, seconds: Double)] {
        let df = (1 - damping * damping).squareRoot()
        let td = 1 / (frequencyHz * df)
        let k = exp(-damping * Double.pi / df)
        let raw: [(Double, Double)]
        switch kind {
        case .zv:
            raw = [(1, 0), (k, 0.5 * td)]
        case .mzv:
            let k2 = exp(-0.75 * damping * Double.pi / df)
            let a1 = 1 - 1 / 2.0.squareRoot()
            raw = [(a1, 0), ((2.0.squareRoot() - 1) * k2, 0.375 * td), (a1 * k2 * k2, 0.75 * td)]
        case .ei:
            let v = 0.05
            raw = [(0.25 * (1 + v), 0), (0.5 * (1 - v) * k, 0.5 * td), (0.25 * (1 + v) * k * k, td)]
        case .zvd:
            raw = [(1, 0), (2 * k, 0.5 * td), (k * k, td)]
        }
        let sum = raw.reduce(0) { $0 + $1.0 }
        return raw.map { (amplitude: $0.0 / sum, seconds: $0.1) }
    }

    /// How much longer a shaped move takes than the move itself, seconds.
    public var durationSeconds: Double { impulses.last?.seconds ?? 0 }
}

/// Shapes a stream of poses, one per tick: each axis's output is the sum of its recent
/// reference poses delayed by its shaper's impulse times and weighted by their amplitudes
/// (a delay that falls between ticks is split between the two, linearly). The weights are
/// positive and sum to 1, so every output frame is a convex combination of reference
/// frames: it stays within any soft limits, velocity and acceleration the reference
/// kept (each finite difference is the same combination of the reference's).
///
/// Runs on the loop thread: the history is a fixed window sized at init (a delay line
/// indexed by age, which the project's `SPSCRing` queue is not), so `shape` allocates
/// nothing.
public struct InputShaper: Sendable {
    private let axisCount: Int
    /// Frames kept per axis (the longest delay + 1).
    private let window: Int
    /// Axis-major: `axis * window + slot`.
    private var history: [Double]
    /// The slot of the newest frame.
    private var newest = 0
    /// Per axis, the range of its taps in `tapDelay`/`tapWeight` (`tapStart[i]..<tapStart[i+1]`).
    private let tapStart: [Int]
    private let tapDelay: [Int]
    private let tapWeight: [Double]
    /// Ticks after the reference comes to rest until the shaped output is at rest on it too.
    public let tailTicks: Int
    /// No axis is shaped: `shape` copies.
    public let isIdentity: Bool

    public init(axes: [Axis], tickSeconds: Double, startPose: [Double]) {
        axisCount = axes.count
        var starts = [0]
        var delays: [Int] = []
        var weights: [Double] = []
        var longest = 0
        for axis in axes {
            for impulse in axis.shaper?.impulses ?? [] where impulse.amplitude > 0 {
                let d = impulse.seconds / tickSeconds
                let whole = Int(d)
                let frac = d - Double(whole)
                // A delay within a hair of a tick is that tick (no second tap of weight ~0).
                if frac < 1e-9 || frac > 1 - 1e-9 {
                    let at = Int(d.rounded())
                    delays.append(at)
                    weights.append(impulse.amplitude)
                    longest = max(longest, at)
                } else {
                    delays.append(whole)
                    weights.append(impulse.amplitude * (1 - frac))
                    delays.append(whole + 1)
                    weights.append(impulse.amplitude * frac)
                    longest = max(longest, whole + 1)
                }
            }
            starts.append(delays.count)
        }
        tapStart = starts
        tapDelay = delays
        tapWeight = weights
        tailTicks = longest
        isIdentity = delays.isEmpty
        window = longest + 1
        history = [Double](repeating: 0, count: axes.count * (longest + 1))
        reset(to: startPose)
    }

    /// The rig stands at `pose` with nothing in flight (a start, or a stop from rest).
    public mutating func reset(to pose: [Double]) {
        for i in 0..<axisCount {
            for s in 0..<window { history[i * window + s] = pose[i] }
        }
        newest = 0
    }

    /// Takes this tick's reference pose and writes the shaped pose.
    @inline(__always)
    public mutating func shape(_ reference: [Double], into out: inout [Double]) {
        guard !isIdentity else {
            for i in 0..<axisCount { out[i] = reference[i] }
            return
        }
        newest = newest + 1 == window ? 0 : newest + 1
        for i in 0..<axisCount {
            let base = i * window
            let x0 = reference[i]
            history[base + newest] = x0
            let first = tapStart[i]
            let end = tapStart[i + 1]
            guard first < end else {
                out[i] = x0
                continue
            }
            // Relative to the newest frame, so a reference at rest comes out exactly (the
            // weights' sum is 1 only to rounding).
            var sum = 0.0
            for t in first..<end {
                var slot = newest - tapDelay[t]
                if slot < 0 { slot += window }
                sum += tapWeight[t] * (history[base + slot] - x0)
            }
            out[i] = x0 + sum
        }
    }
}
