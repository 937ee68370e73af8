import Foundation
import RigTestSupport
import Testing

/// `rig bench loop` runs and reports in the documented shape. Counts only: how late the
/// loop woke depends on the machine, so no figure is asserted here.
@Suite struct BenchSmokeTests {
    @Test func benchLoopPrintsTheDocumentedJSON() throws {
        let result = try RigProcess.run(["bench", "loop", "--rate", "100", "--seconds", "0.5", "--json"])
        #expect(result.status == 0, "\(result.stderr)")

        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect(Set(object.keys) == ["rate_hz", "seconds", "rig", "rig_page_faults_after_first_tick"])
        #expect(object["rate_hz"] as? Double == 100)
        #expect(object["seconds"] as? Double == 0.5)

        let rig = try #require(object["rig"] as? [String: Any])
        #expect(Set(rig.keys) == ["ticks", "missed", "lateness_us", "cpu_us_per_tick"])
        let lateness = try #require(rig["lateness_us"] as? [String: Any])
        #expect(Set(lateness.keys) == ["p50", "p99", "p999", "max"])
        for key in ["p50", "p99", "p999", "max"] { #expect(lateness[key] is Double, "lateness_us.\(key)") }
        #expect(rig["missed"] is Int)
        #expect(rig["cpu_us_per_tick"] is Double)

        let faults = try #require(object["rig_page_faults_after_first_tick"] as? [String: Any])
        #expect(Set(faults.keys) == ["minor", "major"])
        #expect(faults["minor"] is Int)
        #expect(faults["major"] is Int)

        // rate × seconds ticks, give or take the program's lead-in and end ticks.
        let ticks = try #require(rig["ticks"] as? Int)
        #expect(abs(ticks - 50) <= 2, "ticks: \(ticks)")
    }
}
