import FoundationEssentials
import Glibc
import RigFormat
import RigSky

/// When a program starts on the clock (`"start"`): a UTC time, a time with its offset, or a
/// sun event at the program's site (`{"sun": "sunset", "offsetMinutes": -30}`), resolved
/// to a UTC time when the file is read. `rig play` holds the rig still until then.
public struct ProgramStart: Sendable, Equatable {
    /// UTC, Unix seconds.
    public var unix: Double
    /// The sun event it was given by ("sunset − 30 min"); nil for a time.
    public var event: String?

    public init(unix: Double, event: String? = nil) {
        self.unix = unix
        self.event = event
    }
}

/// The sun events a start can name: the key in the file, the name `SunTimes` gives it, and
/// whether the sun is rising then.
public enum SunEvent: String, Sendable, CaseIterable {
    case sunrise, sunset, civilDawn, civilDusk, nauticalDawn, nauticalDusk, astronomicalDawn, astronomicalDusk

    /// "civil dusk", as `SunTimes.events` names it.
    public var name: String {
        switch self {
        case .sunrise: "sunrise"
        case .sunset: "sunset"
        case .civilDawn: "civil dawn"
        case .civilDusk: "civil dusk"
        case .nauticalDawn: "nautical dawn"
        case .nauticalDusk: "nautical dusk"
        case .astronomicalDawn: "astronomical dawn"
        case .astronomicalDusk: "astronomical dusk"
        }
    }

    /// The sun's geometric altitude that defines it.
    public var altitude: Double {
        switch self {
        case .sunrise, .sunset: -0.833
        case .civilDawn, .civilDusk: -6
        case .nauticalDawn, .nauticalDusk: -12
        case .astronomicalDawn, .astronomicalDusk: -18
        }
    }

    public var rising: Bool {
        switch self {
        case .sunrise, .civilDawn, .nauticalDawn, .astronomicalDawn: true
        default: false
        }
    }

    /// The event on the site's day starting at `dayStart` (Unix seconds; 24 h), or nil.
    public func time(site: Site, from: Double, to: Double) -> Double? {
        SunTimes.events(site: site, from: from, to: to).first { $0.name == name }?.unix
    }

    /// The start of the site's mean solar day on a civil date `YYYY-MM-DD`: midnight at
    /// the site's longitude (UTC midnight − longitude / 15 h). nil for a date that does
    /// not exist.
    public static func dayStart(date: String, site: Site) -> Double? {
        guard UTCTime.isCalendarValid(date + "T00:00:00"), date.utf8.count == 10, let midnight = UTCTime.parse(date + "T00:00:00Z") else {
            return nil
        }
        return midnight - site.longitude / 15 * 3600
    }
}

/// "78.2232°N 15.6267°E".
public func siteText(_ site: Site) -> String {
    "\(fixed(abs(site.latitude), 4))°\(site.latitude >= 0 ? "N" : "S") \(fixed(abs(site.longitude), 4))°\(site.longitude >= 0 ? "E" : "W")"
}

extension ProgramParser {
    /// A clock time in a file: ISO 8601 with `Z` or an offset (`+01:00`), in 2000–2099.
    static func parseClockTime(_ value: ValueReader, what: String) throws(FileError) -> Double {
        let text = try value.nonEmptyString()
        guard let unix = UTCTime.parse(text), (946_684_800...4_102_444_800).contains(unix) else {
            throw value.error(
                "\"\(elided(text))\" is not \(what) in 2000–2099; valid: ISO 8601 with its zone, such as \"2026-11-26T16:30:00Z\" or \"2026-11-26T17:30:00+01:00\""
            )
        }
        return unix
    }

    /// `"start"`: a time, or `{"sun": EVENT, "offsetMinutes": M, "date": "YYYY-MM-DD"}` at
    /// `site`. Without a date, the next such start after `now`.
    static func parseStart(_ value: ValueReader, site: Site?, now: Double) throws(FileError) -> ProgramStart {
        if case .string = value.node.value {
            return ProgramStart(unix: try parseClockTime(value, what: "a start time"))
        }
        guard case .object = value.node.value else {
            throw value.error(
                "expected a time such as \"2026-11-26T16:30:00Z\" or a sun event such as {\"sun\": \"sunset\", \"offsetMinutes\": -30}, found \(value.node.value.kindName)"
            )
        }
        let object = try value.object()
        let eventValue = try object.required("sun", "the sun event: one of \(SunEvent.allCases.map(\.rawValue).joined(separator: ", "))")
        let event = SunEvent(rawValue: try eventValue.oneOf(SunEvent.allCases.map(\.rawValue))) ?? .sunset
        let offset = try object.optional("offsetMinutes")?.number(in: -720...720, unit: "min") ?? 0
        let dateValue = object.optional("date")
        let date = try dateValue?.nonEmptyString()
        try object.finish()
        guard let site else {
            throw value.error("a start at a sun event needs the site: give \"site\": {\"latitude\", \"longitude\"} in the program or its rig")
        }
        let minutes = Int(offset.rounded())
        let label =
            offset == 0
            ? event.name : "\(event.name) \(offset < 0 ? "−" : "+") \(abs(offset) == Double(abs(minutes)) ? String(abs(minutes)) : format(abs(offset))) min"
        let place = siteText(site)
        if let date, let dateValue {
            guard let dayStart = SunEvent.dayStart(date: date, site: site), (946_684_800...4_102_444_800).contains(dayStart) else {
                throw dateValue.error("\"\(elided(date))\" is not a date in 2000–2099; valid: \"YYYY-MM-DD\" such as \"2026-11-26\"")
            }
            guard let unix = event.time(site: site, from: dayStart, to: dayStart + 86400) else {
                throw eventValue.error("there is no \(event.name) on \(date) at \(place): \(polarReason(event, site: site, from: dayStart))")
            }
            return ProgramStart(unix: unix + offset * 60, event: label)
        }
        // The next one whose start (event + offset) is after now, within two days.
        let from = now - offset * 60
        guard let unix = event.time(site: site, from: from, to: from + 2 * 86400) else {
            throw eventValue.error(
                "there is no \(event.name) at \(place) in the two days from \(UTCTime.text(now, dateToo: true)): \(polarReason(event, site: site, from: from)); give a time instead"
            )
        }
        return ProgramStart(unix: unix + offset * 60, event: label)
    }

    /// Why the sun never crosses `event`'s altitude over a day: it stays above or below it.
    static func polarReason(_ event: SunEvent, site: Site, from: Double) -> String {
        let noon = stride(from: from, through: from + 86400, by: 600).map {
            Sky.position(of: .sun, at: $0, site: site, refraction: false).altitude
        }
        let highest = noon.max() ?? 0
        let lowest = noon.min() ?? 0
        if lowest > event.altitude {
            return "the sun stays above \(format(event.altitude))° all day (lowest \(fixed(lowest, 1))°: polar day)"
        }
        return "the sun stays below \(format(event.altitude))° all day (highest \(fixed(highest, 1))°\(highest < -0.833 ? ": polar night" : ""))"
    }
}
