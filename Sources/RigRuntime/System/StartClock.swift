import FoundationEssentials
import Glibc
import RigCore
import RigFormat

/// The wait for a program's `"start"`, one place for `rig play` and `rig serve`: how it is
/// said, when a start is too late to wait for, and the wait itself on the wall clock
/// (woken on each second, so a clock stepped by NTP during a long wait is followed, and a
/// cancel is seen within a second). Nothing is sent to the rig while it waits.
public enum StartClock {
    /// "16:02 local (sunset − 30 min; 2026-11-26 15:02:00 UTC)".
    public static func describe(_ start: ProgramStart, now: Double = Date().timeIntervalSince1970) -> String {
        let event = start.event.map { "\($0); " } ?? ""
        return "\(localClock(start.unix, now: now)) local (\(event)\(UTCTime.text(start.unix, dateToo: true)))"
    }

    /// "16:02" in the machine's time zone (`TZ`), with the date when it is not today.
    public static func localClock(_ unix: Double, now: Double = Date().timeIntervalSince1970, seconds: Bool = false) -> String {
        guard let time = LocalTime(unix.rounded()) else { return UTCTime.text(unix, dateToo: true) }
        let sameDay = LocalTime(unix)?.date == LocalTime(now)?.date
        // Rounded to the second as `UTCTime.text` rounds (`LocalTime` truncates).
        return (sameDay ? "" : time.date + " ") + time.clock(seconds: seconds)
    }

    /// "1 h 05 min", "12 min 30 s", "45 s".
    public static func duration(_ seconds: Double) -> String {
        let s = Int(max(seconds, 0).rounded())
        if s >= 3600 { return "\(s / 3600) h \(zeroPadded(s / 60 % 60, 2)) min" }
        if s >= 60 { return "\(s / 60) min \(zeroPadded(s % 60, 2)) s" }
        return "\(s) s"
    }

    /// "1 h 12 min", "4 min 05 s", "12 s": the time left, rounded up to the second.
    public static func left(_ seconds: Double) -> String {
        duration(max(seconds, 0).rounded(.up))
    }

    /// Why a start cannot be waited for: more than a second past ("the program starts at
    /// …, 5 min 00 s ago"), or nil.
    public static func pastProblem(_ start: ProgramStart, now: Double = Date().timeIntervalSince1970) -> String? {
        guard start.unix < now - 1 else { return nil }
        return "the program starts at \(describe(start, now: now)), \(duration(now - start.unix)) ago"
    }

    /// Waits until `unix` on the wall clock. Calls `tick` with the seconds left at the
    /// start and on each second after it; ends early, returning false, once `cancelled`
    /// says so (asked on each wake). True once the time has come.
    public static func wait(
        until unix: Double, now: () -> Double = { Date().timeIntervalSince1970 }, cancelled: () -> Bool = { false },
        tick: (Double) -> Void = { _ in }
    ) -> Bool {
        while true {
            if cancelled() { return false }
            let t = now()
            let remaining = unix - t
            if remaining <= 0 { return true }
            tick(remaining)
            // Wakes on the second (and at the start exactly).
            let step = min(remaining, 1 - (t - t.rounded(.down)) + 0.001)
            SystemThread.sleep(seconds: max(step, 0.001))
        }
    }
}
