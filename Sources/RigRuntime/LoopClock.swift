#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// The loop's sense of time, so tests can run the loop on a clock they advance.
public protocol LoopClock: Sendable {
    /// Nanoseconds on a monotonic scale.
    func now() -> UInt64
    /// Sleeps until `deadline` (absolute, same scale as `now()`).
    func sleep(until deadline: UInt64)
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
