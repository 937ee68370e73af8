import CLinux
import Glibc

/// The system clock as NTP keeps it: sun and moon programs need the right time.
public enum SystemClock {
    /// Whether the kernel says the clock is synchronised, and its estimated error in µs;
    /// nil when it cannot be asked.
    public static func synchronisation() -> (synchronised: Bool, estimatedErrorMicroseconds: Int)? {
        var error = 0
        let state = rig_clock_synchronised(&error)
        guard state >= 0 else { return nil }
        return (state == 1, error)
    }
}
