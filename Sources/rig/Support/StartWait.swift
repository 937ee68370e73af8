import ArgumentParser
import FoundationEssentials
import Glibc
import RigCore
import RigFormat
import RigRuntime

/// `rig play`'s wait for a program's `"start"`: after every check, before the output
/// starts or anything moves. The rig holds where it stands (nothing is sent to it); a
/// signal during the wait is the process-wide "stopped by SIG… before anything moved"
/// (exit 0, nothing moved).
enum StartWait {
    /// "16:02 local (sunset − 30 min; 2026-11-26 15:02:00 UTC)".
    static func describe(_ start: ProgramStart) -> String {
        let event = start.event.map { "\($0); " } ?? ""
        return "\(localClock(start.unix)) local (\(event)\(UTCTime.text(start.unix, dateToo: true)))"
    }

    /// "16:02" in the machine's time zone (`TZ`), with the date when it is not today.
    static func localClock(_ unix: Double, now: Double = Date().timeIntervalSince1970, seconds: Bool = false) -> String {
        guard let time = LocalTime(unix.rounded()) else { return UTCTime.text(unix, dateToo: true) }
        let sameDay = LocalTime(unix)?.date == LocalTime(now)?.date
        // Rounded to the second as `UTCTime.text` rounds (`LocalTime` truncates).
        return (sameDay ? "" : time.date + " ") + time.clock(seconds: seconds)
    }

    /// "1 h 12 min", "4 min 05 s", "12 s": the time left, rounded up to the second.
    static func left(_ seconds: Double) -> String {
        ShootTime.duration(max(seconds, 0).rounded(.up))
    }

    /// Refuses (exit 2) a start more than a second past, unless `startNow`.
    static func refuseIfPast(_ start: ProgramStart, file: String, startNow: Bool, now: Double = Date().timeIntervalSince1970) throws {
        guard !startNow, start.unix < now - 1 else { return }
        printError(
            "\(file): error: the program starts at \(describe(start)), \(ShootTime.duration(now - start.unix)) ago: refusing to play (nothing moved); give a later \"start\", or --start-now to start at once"
        )
        throw ExitCode(2)
    }

    /// Waits until `start`, saying so: one line, then (on a terminal) the time left
    /// counted down in place every second; a line every 10 minutes otherwise.
    static func wait(until start: ProgramStart, isTTY: Bool) {
        var now = Date().timeIntervalSince1970
        guard start.unix > now else { return }
        say("⏳ starts at \(describe(start)), in \(left(start.unix - now)); the rig holds still until then (Ctrl-C ends it, nothing moved)")
        var lastLine = now
        while true {
            now = Date().timeIntervalSince1970
            let remaining = start.unix - now
            if remaining <= 0 { break }
            if isTTY {
                StandardStreams.out("\r  starting in \(left(remaining))   ")
            } else if now - lastLine >= 600 {
                say("  starting in \(left(remaining))")
                lastLine = now
            }
            // Wakes on the second (and at the start exactly); a signal ends the process
            // from the signal thread whatever this thread does.
            let step = min(remaining, 1 - (now - now.rounded(.down)) + 0.001)
            SystemThread.sleep(seconds: max(step, 0.001))
        }
        if isTTY { StandardStreams.out("\r\u{1B}[K") }
        say("▶ start: \(localClock(start.unix, seconds: true)) local (\(UTCTime.text(start.unix, dateToo: false)))")
    }
}
