import Glibc
import Synchronization

/// The wall clock (CLOCK_REALTIME, UTC) in nanoseconds, and waits on it to an absolute
/// time: a group's shared timeline, where a shot is due at the same UTC instant on every
/// rig (chrony keeps the rigs' clocks together).
public enum WallClock {
    /// UTC nanoseconds now.
    public static func nanoseconds() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
    }

    /// Sleeps this thread until UTC nanosecond `ns` (at once when it has passed), on the
    /// realtime clock to that absolute time: a clock step meanwhile is followed.
    public static func sleep(untilNanoseconds ns: Int64) {
        var ts = timespec(tv_sec: Int(ns / 1_000_000_000), tv_nsec: Int(ns % 1_000_000_000))
        while clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &ts, nil) == EINTR {}
    }
}

/// Runs `action` at UTC nanosecond `atNs` from a thread of its own, sleeping on the
/// realtime clock to that absolute time (not the next control-loop tick), and hands it
/// the time it measured as it woke. `cancel()` before then: it does not run.
public final class ShotTimer: Sendable {
    private let cancelled = Mutex(false)

    public init(atNs: Int64, action: @escaping @Sendable (Int64) -> Void) {
        SystemThread.start(name: "rig-shot-timer") { [self] in
            RealtimeSetup.applyToShotThread()
            WallClock.sleep(untilNanoseconds: atNs)
            let edge = WallClock.nanoseconds()
            guard !cancelled.withLock({ $0 }) else { return }
            action(edge)
        }
    }

    public func cancel() { cancelled.withLock { $0 = true } }
}
