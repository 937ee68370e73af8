/// How fast and how hard a keyframes path moves each axis near each moment of its time:
/// what a timeline played faster or slower than real time (a group's shared clock, see
/// `SharedTimeline` in RigRuntime) may ask of the axis there. Per axis and per bucket of
/// `bucketTicks` ticks of path time, the largest |velocity| and |acceleration| (finite
/// differences at the tick rate, as the servo sees them) near it (a bucket either side),
/// and the largest in the `aheadBuckets` that come next (past the path's end: infinite,
/// so a timeline played faster is back at its own pace before the path ends and parks).
public struct PathPeaks: Sendable, Equatable {
    public let bucketTicks: Int
    /// [axis][bucket]: near the bucket, and from it to `aheadBuckets` after it.
    public let velocity: [[Double]]
    public let acceleration: [[Double]]
    public let aheadVelocity: [[Double]]
    public let aheadAcceleration: [[Double]]

    /// From per-bucket peaks (axis, bucket) of the path.
    public init(velocity v: [[Double]], acceleration a: [[Double]], bucketTicks: Int, aheadBuckets: Int = 40) {
        func widened(_ rows: [[Double]], before: Int, after: Int) -> [[Double]] {
            rows.map { row in
                row.indices.map { b in
                    b + after >= row.count ? Double.infinity : row[max(0, b - before)...(b + after)].max() ?? 0
                }
            }
        }
        func near(_ rows: [[Double]]) -> [[Double]] {
            rows.map { row in row.indices.map { b in row[max(0, b - 1)...min(row.count - 1, b + 1)].max() ?? 0 } }
        }
        velocity = near(v)
        acceleration = near(a)
        aheadVelocity = widened(v, before: 1, after: aheadBuckets)
        aheadAcceleration = widened(a, before: 1, after: aheadBuckets)
        self.bucketTicks = max(1, bucketTicks)
    }

    /// The path of `motion` (nil for a stepped program), sampled at `tickSeconds`.
    /// Bounded by the program's own bound on ticks (`check` refuses longer ones first).
    public init?(motion: Motion, axisCount: Int, tickSeconds dt: Double, bucketTicks: Int = 10, aheadBuckets: Int = 40) {
        guard case .continuous(let tracks, let duration) = motion, dt > 0, duration.isFinite else { return nil }
        let ticks = min(Int((duration / dt).rounded(.up)) + 2, 10_000_000)
        let buckets = ticks / max(1, bucketTicks) + 1
        var v = [[Double]](repeating: [Double](repeating: 0, count: buckets), count: axisCount)
        var a = v
        for i in 0..<axisCount {
            guard i < tracks.count, let track = tracks[i] else { continue }
            var cursor = 0
            var p0 = track.value(at: 0, cursor: &cursor)
            var v0 = 0.0
            for k in 1...ticks {
                let p1 = track.value(at: Double(k) * dt, cursor: &cursor)
                let v1 = (p1 - p0) / dt
                let b = k / max(1, bucketTicks)
                v[i][b] = max(v[i][b], abs(v1))
                if k > 1 { a[i][b] = max(a[i][b], abs(v1 - v0) / dt) }
                p0 = p1
                v0 = v1
            }
        }
        self.init(velocity: v, acceleration: a, bucketTicks: bucketTicks, aheadBuckets: aheadBuckets)
    }

    /// Axis `axis` at path tick `tick`: the peaks near it, and ahead of it (past the end:
    /// the last bucket's near, infinite ahead).
    @inline(__always)
    public func at(axis: Int, tick: Double) -> (velocity: Double, acceleration: Double, aheadVelocity: Double, aheadAcceleration: Double) {
        let row = velocity[axis]
        guard !row.isEmpty else { return (0, 0, .infinity, .infinity) }
        let b = min(max(Int(max(tick, 0)) / bucketTicks, 0), row.count - 1)
        return (row[b], acceleration[axis][b], aheadVelocity[axis][b], aheadAcceleration[axis][b])
    }
}
