import FoundationEssentials
import Glibc

/// UTC times as rig reads and prints them: ISO 8601 in (`"2026-06-21T19:00:00Z"`, fractional
/// seconds allowed), `2026-06-21 19:00:00 UTC` out. Printing is arithmetic, no formatter: a
/// 100,000-frame track labels every frame.
public enum UTCTime {
    /// Unix seconds of an ISO 8601 time with a zone, or nil.
    public static func parse(_ text: String) -> Double? {
        // The formatter rolls a day that does not exist over into the next month
        // (2026-02-29 is read as 1 March): the fields are checked against the calendar first.
        guard isCalendarValid(text) else { return nil }
        if let date = try? Date(text, strategy: .iso8601) { return date.timeIntervalSince1970 }
        return (try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)))?.timeIntervalSince1970
    }

    /// `YYYY-MM-DDTHH:MM:SS…` with a month of 1–12, a day that month has (leap years
    /// counted), an hour of 0–23, minutes and seconds of 0–59.
    public static func isCalendarValid(_ text: String) -> Bool {
        let b = Array(text.utf8.prefix(19))
        guard b.count == 19, b[4] == UInt8(ascii: "-"), b[7] == UInt8(ascii: "-"), b[10] == UInt8(ascii: "T") || b[10] == UInt8(ascii: "t"),
            b[13] == UInt8(ascii: ":"), b[16] == UInt8(ascii: ":")
        else { return false }
        func number(_ range: Range<Int>) -> Int? {
            var n = 0
            for i in range {
                guard b[i] >= UInt8(ascii: "0"), b[i] <= UInt8(ascii: "9") else { return nil }
                n = n * 10 + Int(b[i] - UInt8(ascii: "0"))
            }
            return n
        }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10), let hour = number(11..<13),
            let minute = number(14..<16), let second = number(17..<19), (1...12).contains(month)
        else { return false }
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]
        return (1...days).contains(day) && hour <= 23 && minute <= 59 && second <= 59
    }

    /// "19:04:10 UTC", or with the date "2026-06-21 19:04:10 UTC" (to the nearest second).
    public static func text(_ unix: Double, dateToo: Bool) -> String {
        let seconds = Int64(bounded(unix).rounded())
        let (date, inDay) = civil(seconds)
        let clock = "\(two(inDay / 3600)):\(two(inDay / 60 % 60)):\(two(inDay % 60)) UTC"
        return dateToo ? "\(date) \(clock)" : clock
    }

    /// ISO 8601 in UTC to the millisecond, `2026-06-21T19:04:10.250Z`: what `parse` reads,
    /// and what XMP and EXIF readers take (fractional seconds and the zone).
    public static func iso(_ unix: Double) -> String {
        let millis = Int64((bounded(unix) * 1000).rounded())
        let whole = millis >= 0 ? millis / 1000 : (millis - 999) / 1000
        let fraction = Int(millis - whole * 1000)
        let (date, inDay) = civil(whole)
        let ms = fraction < 10 ? "00\(fraction)" : fraction < 100 ? "0\(fraction)" : "\(fraction)"
        return "\(date)T\(two(inDay / 3600)):\(two(inDay / 60 % 60)):\(two(inDay % 60)).\(ms)Z"
    }

    /// ISO 8601 in UTC to the microsecond from Unix nanoseconds, `2026-06-21T19:04:10.250031Z`
    /// (a group's shared timeline in its log).
    public static func isoMicros(nanoseconds ns: Int64) -> String {
        let micros = ns >= 0 ? ns / 1000 : (ns - 999) / 1000
        let whole = micros >= 0 ? micros / 1_000_000 : (micros - 999_999) / 1_000_000
        let fraction = String(micros - whole * 1_000_000)
        let (date, inDay) = civil(whole)
        return "\(date)T\(two(inDay / 3600)):\(two(inDay / 60 % 60)):\(two(inDay % 60)).\(String(repeating: "0", count: 6 - fraction.count) + fraction)Z"
    }

    /// ISO 8601 in UTC to the whole second (truncated), `2026-06-21T19:04:10Z`.
    public static func isoSeconds(_ unix: Double) -> String {
        let f = fields(unix)
        return "\(f.date)T\(two(f.hour)):\(two(f.minute)):\(two(f.second))Z"
    }

    /// The civil date and clock of `unix` in UTC to the whole second, truncated as a date
    /// formatter truncates: `("2026-06-21", 19, 4, 10)`; for stamps in other layouts.
    public static func fields(_ unix: Double) -> (date: String, hour: Int, minute: Int, second: Int) {
        let (date, inDay) = civil(Int64(bounded(unix).rounded(.down)))
        return (date, inDay / 3600, inDay / 60 % 60, inDay % 60)
    }

    /// Unix seconds a file may hold, whatever it holds (1e300 or NaN must not trap the
    /// conversion): ±100,000 years.
    private static func bounded(_ unix: Double) -> Double {
        unix.isFinite ? min(max(unix, -3.2e12), 3.2e12) : 0
    }

    private static func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }

    /// The civil date (`2026-06-21`) of Unix `seconds` and the seconds into that day.
    private static func civil(_ seconds: Int64) -> (date: String, inDay: Int) {
        let day = seconds >= 0 ? seconds / 86400 : (seconds - 86399) / 86400
        let inDay = Int(seconds - day * 86400)
        // Howard Hinnant's days-to-civil.
        let z = day + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = Int(doy - (153 * mp + 2) / 5 + 1)
        let m = Int(mp < 10 ? mp + 3 : mp - 9)
        let y = yoe + era * 400 + (m <= 2 ? 1 : 0)
        return ("\(y)-\(two(m))-\(two(d))", inDay)
    }
}
