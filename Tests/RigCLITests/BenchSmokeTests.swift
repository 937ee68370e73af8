import Foundation
import RigTestSupport
import Testing

/// `rig bench loop` runs and reports in the documented shape. Counts only: how late the
/// loop woke depends on the machine, so no figure is asserted here.
@Suite struct BenchSmokeTests {
    @Test(.blocking) func benchLoopPrintsTheDocumentedJSON() throws {
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

/// `rig bench settle` runs and prints its rows. No figure is asserted: they are the
/// benchmark's to report.
@Suite struct BenchSettleSmokeTests {
    @Test(.blocking) func benchSettlePrintsARowPerPayload() throws {
        let result = try RigProcess.run(["bench", "settle", "--payloads", "3", "5", "--pwm-hz", "50", "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let rows = try #require(object["rows"] as? [[String: Any]])
        #expect(rows.map { $0["payload_hz"] as? Double } == [3, 5])
        for row in rows {
            #expect(
                Set(row.keys) == [
                    "payload_hz", "pwm_hz", "count_deg", "settle_timeout_s", "settle_hold_s", "reference", "shaped", "step_time_ratio",
                    "wobble_ratio_20pct_off", "identified", "levers",
                ])
            let levers = try #require(row["levers"] as? [String: Any])
            #expect(
                Set(levers.keys) == [
                    "S-curve, hold", "trapezoid, hold", "trapezoid, envelope", "trapezoid, hold, trim", "trapezoid, envelope, trim",
                ])
            let panoramas: [(String, Any?)] = [("reference", row["reference"]), ("shaped", row["shaped"])] + levers.map { ($0.key, $0.value) }
            for (key, value) in panoramas {
                let panorama = try #require(value as? [String: Any], "\(key)")
                #expect(panorama["frames"] as? Int == 24, "\(key)")
                #expect(panorama["seconds_per_step"] is Double)
                #expect(panorama["blurred_frames"] is Int)
            }
            let wobble = try #require(row["wobble_ratio_20pct_off"] as? [String: Any])
            #expect(Set(wobble.keys) == ["zv", "mzv", "ei", "zvd"])
        }
    }

    @Test(.blocking) func benchSettlePrintsItsTables() throws {
        let result = try RigProcess.run(["bench", "settle", "--payloads", "4", "--pwm-hz", "50", "200"])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        // A panorama row, five levers' rows and four shapers' wobble per PWM frequency, one
        // identification.
        #expect(lines.filter { $0.hasPrefix("4 Hz") }.count == 2 * (1 + 5 + 4) + 1, "\(result.stdout)")
    }

    /// `--jerk-ramp` gives the shaped axes' moves a jerk ramp (a rig file's `maxJerk`): the
    /// shaped runs change, the S-curve reference does not, and the JSON says the ramp.
    @Test(.blocking) func benchSettleTakesAJerkRampForTheShapedMoves() throws {
        func run(_ extra: [String]) throws -> (ramp: Any?, reference: Double, levers: [String: Double]) {
            let result = try RigProcess.run(["bench", "settle", "--payloads", "3", "--pwm-hz", "200", "--json"] + extra)
            #expect(result.status == 0, "\(result.stderr)")
            let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
            let row = try #require((object["rows"] as? [[String: Any]])?.first)
            let levers = try #require(row["levers"] as? [String: [String: Any]])
            let reference = try #require((row["reference"] as? [String: Any])?["seconds_per_step"] as? Double)
            return (object["jerk_ramp_s"], reference, levers.compactMapValues { $0["seconds_per_step"] as? Double })
        }
        let plain = try run([])
        let ramped = try run(["--jerk-ramp", "0.08"])
        #expect(plain.ramp is NSNull)
        #expect(ramped.ramp as? Double == 0.08)
        #expect(plain.reference == ramped.reference)
        #expect(plain.levers["S-curve, hold"] == ramped.levers["S-curve, hold"])
        #expect(plain.levers["trapezoid, hold"] != ramped.levers["trapezoid, hold"])
        let bad = try RigProcess.run(["bench", "settle", "--jerk-ramp", "2"])
        #expect(bad.status != 0)
        #expect(bad.stderr.contains("--jerk-ramp 2: valid: 0.001…1 s"), "\(bad.stderr)")
    }

    @Test(.blocking) func benchSettleRefusesABadPayload() throws {
        let result = try RigProcess.run(["bench", "settle", "--payloads", "0"])
        #expect(result.status != 0)
        #expect(result.stderr.contains("--payloads"))
    }
}

/// `rig bench calibrate` runs and prints a row per step. The simulation is deterministic,
/// so the goal is held here too: a point every 100 µs is within 0.5° everywhere.
@Suite struct BenchCalibrateSmokeTests {
    @Test(.blocking) func benchCalibratePrintsARowPerStep() throws {
        let result = try RigProcess.run(["bench", "calibrate", "--steps", "100", "200", "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let rows = try #require(object["rows"] as? [[String: Any]])
        #expect(rows.count == 2)
        #expect(rows.allSatisfy { $0["stayed_in_range"] as? Bool == true })
        let worst = try #require(rows.first?["worst_error_deg"] as? Double)
        #expect(worst <= 0.5)
    }
}

/// `rig bench liveview` runs every part once, briefly, and reports in the documented shape.
/// Counts only: no rate, latency or CPU figure is asserted (they are the benchmark's).
@Suite struct BenchLiveViewSmokeTests {
    @Test func benchLiveViewPrintsTheDocumentedJSON() async throws {
        let result = try await onThread {
            try RigProcess.run([
                "bench", "liveview", "--fps", "10", "--width", "160", "--height", "120", "--viewers", "1,2", "--seconds", "1", "--shots", "2",
                "--slow-pause", "0.2", "--json",
            ])
        }
        #expect(result.status == 0, "\(result.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], "\(result.stdout)")
        #expect(Set(object.keys) == ["source", "machine", "floor", "idle_serve_core_percent", "viewers", "slow", "lossy", "shots"])
        let source = try #require(object["source"] as? [String: Any])
        #expect(source["fps"] as? Double == 10 && source["width"] as? Int == 160 && source["height"] as? Int == 120)
        let floor = try #require(object["floor"] as? [String: Any])
        #expect(Set(floor.keys) == ["fps", "latency_ms", "drawing_core_percent"])
        let spreadKeys: Set<String> = ["p50", "p95", "max", "count"]
        #expect(Set((floor["latency_ms"] as? [String: Any] ?? [:]).keys) == spreadKeys)
        let rowKeys: Set<String> = [
            "viewers", "seconds", "source_fps", "delivered_fps", "delivered_ratio_min", "skipped", "latency_ms", "frame_bytes", "serve_core_percent",
            "drawing_core_percent", "serving_core_percent",
        ]
        let rows = try #require(object["viewers"] as? [[String: Any]])
        #expect(rows.map { $0["viewers"] as? Int } == [1, 2])
        for row in rows {
            #expect(Set(row.keys) == rowKeys)
            #expect(Set((row["delivered_fps"] as? [String: Any] ?? [:]).keys) == ["min", "mean"])
            #expect(((row["latency_ms"] as? [String: Any])?["count"] as? Int ?? 0) > 0, "\(row)")
        }
        let slow = try #require(object["slow"] as? [String: Any])
        #expect(
            Set(slow.keys) == ["pause_s", "frames", "fps", "skipped", "age_ms", "age_ms_first_half", "age_ms_second_half", "frames_behind_newest"])
        #expect((slow["frames"] as? Int ?? 0) >= 1)
        let lossy = try #require(object["lossy"] as? [String: Any])
        #expect(Set(lossy.keys) == rowKeys.union(["link"]))
        #expect(lossy["viewers"] as? Int == 4)
        let shots = try #require(object["shots"] as? [String: Any])
        #expect(
            Set(shots.keys) == [
                "count", "settled_to_confirmed_ms_off", "settled_to_confirmed_ms_on", "ratio_p50", "ratio_p95", "shot_to_shot_ms_off", "shot_to_shot_ms_on",
                "loop_stalls_off", "loop_stalls_on",
                "live_view_back_ms", "never_back",
            ])
        #expect(shots["count"] as? Int == 2)
        for key in ["settled_to_confirmed_ms_off", "settled_to_confirmed_ms_on"] {
            #expect((shots[key] as? [String: Any])?["count"] as? Int == 2, "\(key)")
        }
        for key in ["shot_to_shot_ms_off", "shot_to_shot_ms_on"] {
            #expect((shots[key] as? [String: Any])?["count"] as? Int == 1, "\(key)")
        }
    }
}
