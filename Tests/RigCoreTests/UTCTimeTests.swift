import Foundation
import Testing

@testable import RigCore

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
}
