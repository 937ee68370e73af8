import Glibc
import RigFormat

/// The machine's local time (`TZ`, else /etc/localtime) through the C library's
/// `localtime_r`: FoundationEssentials' `TimeZone.current` is always GMT (its zone data
/// comes with ICU, which rig does without).
public struct LocalTime: Sendable, Equatable {
    /// `2026-11-26`.
    public var date: String
    public var hour: Int
    public var minute: Int
    public var second: Int
    /// The zone's abbreviation (`CET`, `UTC`) as the zone database gives it.
    public var zone: String
    /// Seconds east of UTC.
    public var offset: Int

    /// The local time of `unix`, to the whole second (truncated); nil only for a time the
    /// C library cannot represent.
    public init?(_ unix: Double) {
        guard unix.isFinite, abs(unix) < 3.2e12 else { return nil }
        var seconds = time_t(unix.rounded(.down))
        var fields = tm()
        tzset()
        guard localtime_r(&seconds, &fields) != nil else { return nil }
        date = "\(fields.tm_year + 1900)-\(zeroPadded(Int(fields.tm_mon) + 1, 2))-\(zeroPadded(Int(fields.tm_mday), 2))"
        hour = Int(fields.tm_hour)
        minute = Int(fields.tm_min)
        second = Int(fields.tm_sec)
        zone = fields.tm_zone.map { String(cString: $0) } ?? ""
        offset = Int(fields.tm_gmtoff)
    }

    /// `16:02`, or `16:02:05` with `seconds`.
    public func clock(seconds: Bool = false) -> String {
        "\(zeroPadded(hour, 2)):\(zeroPadded(minute, 2))" + (seconds ? ":\(zeroPadded(second, 2))" : "")
    }

    /// ISO 8601 with the zone's offset, `2026-11-26T16:02:05+01:00` (`Z` in UTC).
    public var iso: String {
        let sign = offset < 0 ? "-" : "+"
        let zoneText = offset == 0 ? "Z" : "\(sign)\(zeroPadded(abs(offset) / 3600, 2)):\(zeroPadded(abs(offset) / 60 % 60, 2))"
        return "\(date)T\(clock(seconds: true))\(zoneText)"
    }
}
