import Foundation
import Testing

@testable import RigCore
@testable import RigFormat

@Suite struct UTCTimeTests {
    /// The arithmetic against Foundation's own formatter, over times from 1970 to 2100.
    @Test func printsWhatFoundationPrints() {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss 'UTC'"
        var generator = SystemRandomNumberGenerator()
        let samples = (0..<2000).map { _ in Double.random(in: 0...4_102_444_800, using: &generator).rounded() } + [0, 951_782_400, 4_107_542_399]
        for unix in samples {
            #expect(UTCTime.text(unix, dateToo: true) == formatter.string(from: Date(timeIntervalSince1970: unix)), "\(unix)")
        }
        #expect(UTCTime.text(1_782_068_650, dateToo: false) == "19:04:10 UTC")
        #expect(UTCTime.parse("2026-06-21T19:04:10Z") == 1_782_068_650)
        #expect(UTCTime.parse("2026-06-21T19:04:10.5Z") == 1_782_068_650.5)
        #expect(UTCTime.parse("yesterday") == nil)
    }

    /// A time no clock gives (a hostile shot log's 1e300, NaN) prints as some date instead
    /// of trapping the conversion.
    @Test func anyNumberPrints() {
        for unix in [1e300, -1e300, .nan, .infinity, -.infinity, 9.3e18] {
            #expect(!UTCTime.text(unix, dateToo: true).isEmpty)
            #expect(UTCTime.iso(unix).hasSuffix("Z"))
        }
    }

    /// A date the calendar does not have is refused, not rolled over into the next month.
    @Test func aDayThatDoesNotExistIsNoTime() {
        for text in [
            "2026-02-29T20:00:00Z", "2026-04-31T00:00:00Z", "2026-13-01T00:00:00Z", "2026-00-10T00:00:00Z", "2026-06-21T24:00:00Z", "2026-06-21T12:60:00Z",
        ] {
            #expect(UTCTime.parse(text) == nil, "\(text)")
        }
        #expect(UTCTime.parse("2028-02-29T20:00:00Z") == 1_835_467_200)
        #expect(UTCTime.parse("2000-02-29T00:00:00Z") != nil)
        #expect(UTCTime.parse("2100-02-29T00:00:00Z") == nil)
    }
}
