import FoundationEssentials
import Glibc

/// Identifies a payload's natural frequency and damping from a ring-down: the camera's
/// angle or angular rate, sampled evenly after a step, ringing about its rest value.
/// The period from the zero crossings, the damping from the logarithmic decrement of the
/// half-cycle peaks (a least-squares line through ln|peak| against time), so noise on
/// single peaks averages out. Pure (`rig calibrate resonance` and the benches use it).
public enum RingDown {
    /// - Parameters:
    ///   - samples: the ring-down, from just after the move ended.
    ///   - sampleSeconds: the time between samples.
    ///   - floorFraction: half-cycles whose peak is below this fraction of the largest are
    ///     left out (they are mostly noise).
    /// - Returns: nil when fewer than three half-cycles stand out of the noise.
    public static func identify(samples: [Double], sampleSeconds dt: Double, floorFraction: Double = 0.1) -> Payload? {
        guard samples.count > 8, dt > 0 else { return nil }
        // The rest value: the mean of the last quarter (the ringing there is smallest).
        let tail = samples[(samples.count * 3 / 4)...]
        let rest = tail.reduce(0, +) / Double(tail.count)
        let x = samples.map { $0 - rest }
        // Zero crossings, interpolated, with a little hysteresis against noise.
        let largest = x.map(abs).max() ?? 0
        guard largest > 0 else { return nil }
        let hysteresis = 0.5 * floorFraction * largest
        var crossings: [Double] = []
        var peaks: [(time: Double, magnitude: Double)] = []
        var sign = 0
        var peak = (time: 0.0, magnitude: 0.0)
        var lastBeyond = 0
        for k in x.indices {
            let v = x[k]
            let s = v > hysteresis ? 1 : (v < -hysteresis ? -1 : 0)
            if s != 0 && s != sign {
                if sign != 0 {
                    // Crossed: find where between the last sample beyond the band and this one.
                    var j = lastBeyond
                    while j < k, (x[j] > 0) == (x[lastBeyond] > 0) { j += 1 }
                    let a = x[j - 1]
                    let b = x[j]
                    crossings.append((Double(j - 1) + (a == b ? 0 : a / (a - b))) * dt)
                    peaks.append(peak)
                }
                sign = s
                peak = (Double(k) * dt, abs(v))
            }
            if s != 0 { lastBeyond = k }
            if s == sign, abs(v) > peak.magnitude { peak = (Double(k) * dt, abs(v)) }
        }
        let kept = peaks.filter { $0.magnitude >= floorFraction * largest }
        guard crossings.count >= 3, kept.count >= 3 else { return nil }
        // Half a damped period between successive crossings (least squares: the slope of
        // crossing time against index).
        let halfPeriod = slope(crossings.indices.map(Double.init), crossings)
        guard halfPeriod > 0 else { return nil }
        let omegaD = Double.pi / halfPeriod
        let sigma = -slope(kept.map(\.time), kept.map { log($0.magnitude) })
        let omegaN = (omegaD * omegaD + max(sigma, 0) * max(sigma, 0)).squareRoot()
        let damping = max(sigma, 0) / omegaN
        return Payload(frequencyHz: omegaN / (2 * Double.pi), damping: damping)
    }

    /// The least-squares slope of y against x.
    static func slope(_ x: [Double], _ y: [Double]) -> Double {
        let n = Double(x.count)
        let mx = x.reduce(0, +) / n
        let my = y.reduce(0, +) / n
        var sxy = 0.0
        var sxx = 0.0
        for i in x.indices {
            sxy += (x[i] - mx) * (y[i] - my)
            sxx += (x[i] - mx) * (x[i] - mx)
        }
        return sxx > 0 ? sxy / sxx : 0
    }
}

extension RingDown {
    /// `values` with each run of non-finite readings (at most `maxGap` long, a tenth of all
    /// at most, none at either end) drawn straight between its neighbours; nil otherwise.
    public static func bridged(_ values: [Double], maxGap: Int) -> [Double]? {
        let missing = values.filter { !$0.isFinite }.count
        if missing == 0 { return values }
        guard missing * 10 <= values.count, let first = values.firstIndex(where: \.isFinite), let last = values.lastIndex(where: \.isFinite),
            first == 0, last == values.count - 1
        else { return nil }
        var out = values
        var i = 0
        while i < out.count {
            guard !out[i].isFinite else {
                i += 1
                continue
            }
            var j = i
            while !out[j].isFinite { j += 1 }
            guard j - i <= maxGap else { return nil }
            let a = out[i - 1]
            let b = out[j]
            for k in i..<j { out[k] = a + (b - a) * Double(k - i + 1) / Double(j - i + 1) }
            i = j
        }
        return out
    }
}
