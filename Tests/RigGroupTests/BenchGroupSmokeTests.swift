import Foundation
import RigTestSupport
import Testing

/// `rig bench group` plays a short group (a leader and a follower through Debian's
/// mosquitto) and reports in the documented shape. No time is asserted: only that every
/// rig shot every step once.
@Suite struct BenchGroupSmokeTests {
    @Test func benchGroupPrintsTheDocumentedJSON() async throws {
        // Off the cooperative pool, under sh as every process here: it waits on the bench for seconds.
        try await onThread {
            let dir = try TestTools.temporaryDirectory()
            let bench = try GroupRig(
                ["bench", "group", "--rigs", "2", "--steps", "10", "--lead-time", "0.3", "--runs", "skew", "--json"], state: dir.appendingPathComponent("state")
            )
            defer { bench.kill9() }
            #expect(bench.exitStatus() == 0, "\(bench.transcript)")
            let object = try #require(try JSONSerialization.jsonObject(with: Data(bench.out.text.utf8)) as? [String: Any], "\(bench.transcript)")
            #expect(Set(object.keys) == ["rigs", "link", "lead_time_s", "realtime", "machine", "skew"])
            #expect(object["rigs"] as? Int == 2)
            #expect(object["link"] as? String == "loopback")
            let skew = try #require(object["skew"] as? [String: Any])
            #expect(Set(skew.keys) == ["steps", "interval_s", "skew_ms", "steps_not_together", "edge_after_order_ms", "integrity"])
            #expect(skew["steps"] as? Int == 10)
            let spread = try #require(skew["skew_ms"] as? [String: Any])
            #expect(Set(spread.keys) == ["p50", "p99", "max", "count"])
            let lateness = try #require(skew["edge_after_order_ms"] as? [String: Any])
            #expect(Set(lateness.keys) == ["lead", "f1"])
            let integrity = try #require(skew["integrity"] as? [String: Any])
            #expect(
                Set(integrity.keys) == ["frames", "twice", "skipped", "own_twice", "own_skipped", "after_expiry", "order_unseen", "refused_expired"])
            #expect(integrity["frames"] as? Int == 20, "\(bench.transcript)")
            for key in ["twice", "skipped", "own_twice", "own_skipped"] { #expect(integrity[key] as? Int == 0, "\(key): \(bench.transcript)") }
        }
    }
}
