/// Wake-up lateness of the loop, kept in a preallocated histogram so recording a tick
/// never allocates. Resolution 1 µs up to 100 ms; later wake-ups count in the top bucket
/// and in `maxNanoseconds`.
public struct LatencyStats: Sendable {
    public static let bucketCount = 100_000
    private var buckets: [UInt32]
    public private(set) var count = 0
    public private(set) var maxNanoseconds: UInt64 = 0
    public private(set) var missedTicks = 0

    public init() {
        buckets = [UInt32](repeating: 0, count: Self.bucketCount)
    }

    /// Records one wake-up `latenessNanoseconds` after its deadline; a wake-up later
    /// than a whole period counts as a missed tick.
    @inline(__always)
    public mutating func record(latenessNanoseconds: UInt64, periodNanoseconds: UInt64) {
        let micros = Int(latenessNanoseconds / 1_000)
        buckets[min(micros, Self.bucketCount - 1)] &+= 1
        count += 1
        if latenessNanoseconds > maxNanoseconds { maxNanoseconds = latenessNanoseconds }
        if latenessNanoseconds >= periodNanoseconds { missedTicks += 1 }
    }

    /// The lateness below which `fraction` of the wake-ups fell, in µs.
    public func percentileMicroseconds(_ fraction: Double) -> Double {
        guard count > 0 else { return 0 }
        let target = max(1, Int((Double(count) * fraction).rounded(.up)))
        var seen = 0
        for (micros, n) in buckets.enumerated() where n > 0 {
            seen += Int(n)
            if seen >= target { return min(Double(micros) + 1, Double(maxNanoseconds) / 1_000) }
        }
        return Double(maxNanoseconds) / 1_000
    }

    public var maxMicroseconds: Double { Double(maxNanoseconds) / 1_000 }
}
