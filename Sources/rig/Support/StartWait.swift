import ArgumentParser
import FoundationEssentials
import Glibc
import RigCore
import RigFormat
import RigRuntime

/// `rig play`'s wait for a program's `"start"` (`StartClock`, as `rig serve` waits): after
/// every check, before the output starts or anything moves. The rig holds where it stands
/// (nothing is sent to it); a signal during the wait is the process-wide "stopped by SIG…
/// before anything moved" (exit 0, nothing moved).
enum StartWait {
    /// "16:02 local (sunset − 30 min; 2026-11-26 15:02:00 UTC)".
    static func describe(_ start: ProgramStart) -> String { StartClock.describe(start) }

    /// "16:02" in the machine's time zone (`TZ`), with the date when it is not today.
    static func localClock(_ unix: Double, now: Double = Date().timeIntervalSince1970, seconds: Bool = false) -> String {
        StartClock.localClock(unix, now: now, seconds: seconds)
    }

    /// Refuses (exit 2) a start more than a second past, unless `startNow`.
    static func refuseIfPast(_ start: ProgramStart, file: String, startNow: Bool, now: Double = Date().timeIntervalSince1970) throws {
        guard !startNow, let past = StartClock.pastProblem(start, now: now) else { return }
        printError("\(file): error: \(past): refusing to play (nothing moved); give a later \"start\", or --start-now to start at once")
        throw ExitCode(2)
    }

    /// Waits until `start`, saying so: one line, then (on a terminal) the time left
    /// counted down in place every second; a line every 10 minutes otherwise.
    static func wait(until start: ProgramStart, isTTY: Bool) {
        let now = Date().timeIntervalSince1970
        guard start.unix > now else { return }
        say(
            "⏳ starts at \(describe(start)), in \(StartClock.left(start.unix - now)); the rig holds still until then (Ctrl-C ends it, nothing moved)"
        )
        var lastLine = now
        // A signal ends the process from the signal thread whatever this thread does.
        _ = StartClock.wait(
            until: start.unix,
            tick: { remaining in
                if isTTY {
                    StandardStreams.out("\r  starting in \(StartClock.left(remaining))   ")
                } else if start.unix - remaining - lastLine >= 600 {
                    say("  starting in \(StartClock.left(remaining))")
                    lastLine = start.unix - remaining
                }
            })
        if isTTY { StandardStreams.out("\r\u{1B}[K") }
        say("▶ start: \(localClock(start.unix, seconds: true)) local (\(UTCTime.text(start.unix, dateToo: false)))")
    }
}
