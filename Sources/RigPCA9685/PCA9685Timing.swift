#if canImport(Glibc)
import Glibc
#endif

/// The clock and the sleep the PCA9685 driver uses, passed in so tests can record the
/// ≥ 500 µs wake wait and the retry backoff instead of sleeping, and step time by hand.
public struct PCA9685Timing: Sendable {
    /// Blocks the calling thread for at least the given time.
    public var sleep: @Sendable (Duration) -> Void
    /// Monotonic time since an arbitrary origin.
    public var now: @Sendable () -> Duration

    public init(sleep: @escaping @Sendable (Duration) -> Void, now: @escaping @Sendable () -> Duration) {
        self.sleep = sleep
        self.now = now
    }

    /// `nanosleep` (restarted after signals) and `CLOCK_MONOTONIC`.
    public static let system = PCA9685Timing(
        sleep: { duration in
            let (seconds, attoseconds) = duration.components
            guard seconds > 0 || attoseconds > 0 else { return }
            var request = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
            var remaining = timespec()
            while nanosleep(&request, &remaining) != 0, errno == EINTR { request = remaining }
        },
        now: {
            var time = timespec()
            clock_gettime(CLOCK_MONOTONIC, &time)
            return .seconds(time.tv_sec) + .nanoseconds(time.tv_nsec)
        }
    )
}
