import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The one clock of the project: the loop's, the drivers' (wake waits, retry backoff,
/// health checks) and the triggers' sense of time, so tests run them on a clock they
/// advance or record.
public protocol LoopClock: Sendable {
    /// Nanoseconds on a monotonic scale.
    func now() -> UInt64
    /// Sleeps until `deadline` (absolute, same scale as `now()`).
    func sleep(until deadline: UInt64)
    /// Blocks for at least `nanoseconds` (a driver's wait). Default: `sleep(until: now() + n)`.
    func sleep(forNanoseconds nanoseconds: UInt64)
}

extension LoopClock {
    public func sleep(forNanoseconds nanoseconds: UInt64) { sleep(until: now() &+ nanoseconds) }

    /// Blocks for at least `duration` (nothing for a negative one).
    public func sleep(for duration: Duration) { sleep(forNanoseconds: duration.wholeNanoseconds) }

    /// `now()` as a `Duration` since the clock's origin.
    public var elapsed: Duration { .nanoseconds(Int64(clamping: now())) }
}

extension Duration {
    /// The duration in whole nanoseconds, 0 for a negative one, saturated at UInt64.max.
    public var wholeNanoseconds: UInt64 {
        let (seconds, attoseconds) = components
        guard seconds >= 0, attoseconds >= 0 else { return 0 }
        let (whole, overflow) = UInt64(seconds).multipliedReportingOverflow(by: 1_000_000_000)
        return overflow ? .max : whole &+ UInt64(attoseconds / 1_000_000_000)
    }
}

/// CLOCK_MONOTONIC with absolute-deadline sleeps (`clock_nanosleep(TIMER_ABSTIME)`), so
/// lateness never accumulates from tick to tick.
public struct MonotonicClock: LoopClock {
    public init() {}

    @inline(__always)
    public func now() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }

    @inline(__always)
    public func sleep(until deadline: UInt64) {
        var ts = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
        // EINTR: a signal arrived; sleep again to the same absolute deadline.
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nil) == EINTR {}
    }
}

/// A clock that jumps to each deadline at once: deterministic loop tests.
public final class ManualClock: LoopClock {
    private let current = Atomic<UInt64>(0)

    public init(start: UInt64 = 0) {
        current.store(start, ordering: .relaxed)
    }

    public func now() -> UInt64 { current.load(ordering: .acquiring) }

    public func sleep(until deadline: UInt64) {
        if deadline > now() { current.store(deadline, ordering: .releasing) }
    }

    public func advance(byNanoseconds delta: UInt64) {
        current.add(delta, ordering: .acquiringAndReleasing)
    }
}

/// CPU time the calling thread has used, in nanoseconds.
@inline(__always)
func threadCPUNanoseconds() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}
