import Foundation
import RigTestSupport
import Testing

/// A leader and followers as real `rig` processes on the simulated rig, through Debian's
/// mosquitto on a free loopback port. Every wait is on an event (a line of output, an
/// exit) with a generous deadline; nothing here asserts a time.
@Suite(.serialized) struct GroupEndToEndTests {
    let steps = 6

    /// Every rig's frames in the leader's log: each step exactly once per rig.
    func expectEveryStepOnce(_ log: String, rigs: [String?], sourceLocation: SourceLocation = #_sourceLocation) throws {
        let frames = try groupFrames(log)
        for rig in rigs {
            let shot = frames.filter { $0.rig == rig }.map(\.step)
            #expect(shot == Array(1...steps), "rig \(rig ?? "leader"): \(shot)", sourceLocation: sourceLocation)
        }
    }

    func leader(
        _ dir: URL, broker: TestBroker, followers: [String], log: String, environment: [String: String] = [:], camera: String? = nil, extra: String? = nil
    ) throws -> GroupRig {
        let program = try writeGroupProgram(in: dir, rigName: "lead", steps: steps, camera: camera, extra: extra)
        return try GroupRig(
            [
                "play", program, "--lead", broker.url, "--group", "g1", "--followers", followers.joined(separator: ","), "--name", "lead",
                "--lead-time", "0.5", "--log", log, "--wait-followers", "120",
            ], state: dir.appendingPathComponent("state-lead"), environment: environment)
    }

    func follower(
        _ name: String, _ dir: URL, broker: TestBroker, environment: [String: String] = [:], camera: String? = nil, log: String? = nil
    ) throws -> GroupRig {
        try follower(name, dir, url: broker.url, environment: environment, camera: camera, log: log)
    }

    /// `prefix`: runs it elsewhere (on a `TestHost`).
    func follower(
        _ name: String, _ dir: URL, url: String, environment: [String: String] = [:], camera: String? = nil, log: String? = nil,
        prefix: [String] = []
    ) throws -> GroupRig {
        let program = try writeGroupProgram(in: dir, rigName: name, steps: steps, camera: camera)
        return try GroupRig(
            ["follow", program, "--broker", url, "--group", "g1", "--name", name, "--leader", "lead"] + (log.map { ["--log", $0] } ?? []),
            state: dir.appendingPathComponent("state-\(name)"), environment: environment, prefix: prefix)
    }

    @Test func aLeaderAndTwoFollowersShootEveryStepOnceThoughOneIsKilledAndComesBack() async throws {
        // Off the cooperative pool: the waits on processes block for seconds.
        try await onThread {
            let broker = try TestBroker()
            defer { broker.stop() }
            let dir = try TestTools.temporaryDirectory()
            let log = dir.appendingPathComponent("group.jsonl").path
            var f1 = try follower("f1", dir, broker: broker)
            let f2 = try follower("f2", dir, broker: broker)
            let lead = try leader(dir, broker: broker, followers: ["f1", "f2"], log: log)
            defer {
                lead.kill9()
                f2.kill9()
            }
            #expect(lead.err.wait(for: "step 2 at", within: 120), "\(lead.transcript)")
            f1.kill9()
            // The leader pauses at the next step boundary and says who is missing.
            #expect(lead.err.wait(for: "waiting for f1 (lost)", within: 120), "\(lead.transcript)")
            f1 = try follower("f1", dir, broker: broker)
            let again = f1
            defer { again.kill9() }
            #expect(lead.err.wait(for: "resumed", within: 120), "\(lead.transcript)")
            #expect(lead.exitStatus() == 0, "\(lead.transcript)")
            #expect(f1.exitStatus() == 0, "\(f1.transcript)")
            #expect(f2.exitStatus() == 0, "\(f2.transcript)")
            try expectEveryStepOnce(log, rigs: [nil, "f1", "f2"])
        }
    }

    /// Rigs with cameras: each fires its own camera at the group's time (a follower logs
    /// its frames in its own log too), and the leader paces the steps by its program's
    /// interval: each step is ordered for no earlier than an interval after the last.
    @Test func camerasFireAtTheGroupsTimeAndTheLeaderKeepsItsInterval() async throws {
        // Off the cooperative pool: the waits on processes block for seconds.
        try await onThread {
            let broker = try TestBroker()
            defer { broker.stop() }
            let dir = try TestTools.temporaryDirectory()
            let log = dir.appendingPathComponent("group.jsonl").path
            let ownLog = dir.appendingPathComponent("f1.jsonl").path
            let camera = #"{"type": "sim"}"#
            let f1 = try follower("f1", dir, broker: broker, camera: camera, log: ownLog)
            let lead = try leader(dir, broker: broker, followers: ["f1"], log: log, camera: camera, extra: #""trigger": "interval:1.5""#)
            defer {
                lead.kill9()
                f1.kill9()
            }
            #expect(lead.exitStatus() == 0, "\(lead.transcript)")
            #expect(f1.exitStatus() == 0, "\(f1.transcript)")
            try expectEveryStepOnce(log, rigs: [nil, "f1"])
            #expect(try groupFrames(ownLog).map(\.step) == Array(1...steps), "the follower's own log: \(f1.transcript)")
            #expect(f1.transcript.contains("at the group's time"), "the follower's camera was fired for the group: \(f1.transcript)")
            // The orders' times (µs) as the leader logged them: an interval apart at least.
            let ordered = lead.transcript.split(separator: "\n").compactMap { line -> Int64? in
                guard let at = line.range(of: " at "), line.contains("group g1: step"), line.contains(" for ") else { return nil }
                let iso = line[at.upperBound...].prefix(27)
                return microseconds(String(iso))
            }
            #expect(ordered.count == steps, "\(lead.transcript)")
            for (a, b) in zip(ordered, ordered.dropFirst()) { #expect(b - a >= 1_500_000, "\(ordered)") }
        }
    }

    /// A keyframes program in a group: each rig leads in to its own first key (the
    /// follower's is far away), holds there, and every rig's path starts at the one time
    /// the leader chose once all were there — never before it.
    @Test func aKeyframesPathStartsOnEveryRigAtTheGroupsTime() async throws {
        // Off the cooperative pool: the waits on processes block for seconds.
        try await onThread {
            let broker = try TestBroker()
            defer { broker.stop() }
            let dir = try TestTools.temporaryDirectory()
            func program(_ name: String, from: Int) throws -> String {
                _ = try writeGroupProgram(in: dir, rigName: name, steps: 1)
                let path = dir.appendingPathComponent("\(name)-path.json").path
                try #"{"rig": "\#(name).json", "kind": "keyframes", "keyframes": {"pan": [{"t": 0, "value": \#(from)}, {"t": 2, "value": \#(from + 20)}]}}"#
                    .write(toFile: path, atomically: true, encoding: .utf8)
                return path
            }
            let f1 = try GroupRig(
                ["follow", try program("f1", from: -70), "--broker", broker.url, "--group", "g1", "--name", "f1", "--leader", "lead"],
                state: dir.appendingPathComponent("state-f1"))
            let lead = try GroupRig(
                ["play", try program("lead", from: 0), "--lead", broker.url, "--group", "g1", "--followers", "f1", "--name", "lead", "--lead-time", "0.5"],
                state: dir.appendingPathComponent("state-lead"))
            defer {
                lead.kill9()
                f1.kill9()
            }
            #expect(lead.exitStatus() == 0, "\(lead.transcript)")
            #expect(f1.exitStatus() == 0, "\(f1.transcript)")
            // The one order: the path's start for both rigs, after both were at their first keys.
            let order = try #require(lead.transcript.split(separator: "\n").first { $0.contains("group g1: step 1 at") && $0.contains(" for f1, lead") })
            let at = try #require(order.range(of: " at ").map { microseconds(String(order[$0.upperBound...].prefix(27))) } ?? nil)
            #expect(f1.transcript.contains("at the first key"), "\(f1.transcript)")
            func started(_ text: String, _ marker: String) -> Int64? {
                text.split(separator: "\n").first { $0.contains(marker) }.flatMap { line in
                    line.range(of: "path at ").map { microseconds(String(line[$0.upperBound...].prefix(27))) }
                        ?? line.range(of: "started at ").flatMap {
                            microseconds(String(line[$0.upperBound...].prefix(27)))
                        }
                }
            }
            let leaderStart = try #require(started(lead.transcript, "the path started at"), "\(lead.transcript)")
            let followerStart = try #require(started(lead.transcript, "rig f1 started its path at"), "\(lead.transcript)")
            #expect(leaderStart >= at && followerStart >= at, "no path starts before the group's time: \(at) \(leaderStart) \(followerStart)")
        }
    }

    @Test func aBrokerRestartHoldsEveryRigAndTheShootGoesOn() async throws {
        // Off the cooperative pool: the waits on processes block for seconds.
        try await onThread {
            let broker = try TestBroker()
            defer { broker.stop() }
            let dir = try TestTools.temporaryDirectory()
            let log = dir.appendingPathComponent("group.jsonl").path
            let f1 = try follower("f1", dir, broker: broker)
            let lead = try leader(dir, broker: broker, followers: ["f1"], log: log)
            defer {
                lead.kill9()
                f1.kill9()
            }
            #expect(lead.err.wait(for: "step 2 at", within: 120), "\(lead.transcript)")
            broker.kill()
            #expect(lead.err.wait(for: "lost the broker", within: 120), "\(lead.transcript)")
            try broker.start()
            #expect(lead.exitStatus() == 0, "\(lead.transcript)")
            #expect(f1.exitStatus() == 0, "\(f1.transcript)")
            try expectEveryStepOnce(log, rigs: [nil, "f1"])
        }
    }

    /// f1 on a host of its own (a network namespace), through the lossy link (20 ± 5 ms, 1 %
    /// held 200 ms), whose link is cut mid-run (a black hole: nothing either way, no close
    /// seen) and comes back: no rig is ordered a step or shoots while f1 is gone, the
    /// leader says it is waiting for f1, the shoot resumes once the link is back, and
    /// every rig has every step once.
    @Test(.enabled(if: TestHost.unavailable == nil, Comment(rawValue: TestHost.unavailable ?? "")))
    func aFollowerBehindACutLinkHoldsTheGroupUntilTheLinkIsBack() async throws {
        // Off the cooperative pool: the waits on processes block for seconds.
        try await onThread {
            let broker = try TestBroker()
            defer { broker.stop() }
            let host = try TestHost()
            defer { host.remove() }
            let link = try TestLossyLink(listen: host.gateway, target: broker.port)
            defer { link.stop() }
            let dir = try TestTools.temporaryDirectory()
            let log = dir.appendingPathComponent("group.jsonl").path
            let f1 = try follower("f1", dir, url: link.url, prefix: host.prefix)
            let f2 = try follower("f2", dir, broker: broker)
            let lead = try leader(dir, broker: broker, followers: ["f1", "f2"], log: log)
            defer {
                lead.kill9()
                f1.kill9()
                f2.kill9()
            }
            #expect(lead.err.wait(for: "step 2 at", within: 120), "\(lead.transcript)")
            #expect(link.send("cut"), "\(link.out.text)")
            // The broker gives f1 up (its keepalive): its will, and the leader says who is missing.
            #expect(lead.err.wait(for: "waiting for f1 (lost)", within: 120), "\(lead.transcript)")
            #expect(link.send("heal"), "\(link.out.text)")
            #expect(lead.err.wait(for: "resumed", within: 120), "\(lead.transcript)")
            // The leader ordered nothing (and shot nothing) from its pause to its resume: a rig
            // fires only on an order, so none did.
            let paused = lead.err.text.components(separatedBy: "waiting for f1 (lost)").dropFirst().joined()
            let whilePaused = paused.components(separatedBy: "resumed").first ?? paused
            #expect(!whilePaused.contains(" at 20"), "ordered or shot while paused: \(lead.transcript)")
            #expect(lead.exitStatus() == 0, "\(lead.transcript)")
            #expect(f1.exitStatus() == 0, "\(f1.transcript)")
            #expect(f2.exitStatus() == 0, "\(f2.transcript)")
            try expectEveryStepOnce(log, rigs: [nil, "f1", "f2"])

        }
    }

    @Test func aFollowerIgnoresExpiredOutOfOrderAndForeignOrders() async throws {
        // Off the cooperative pool: the waits on processes block for seconds.
        try await onThread {
            let broker = try TestBroker()
            defer { broker.stop() }
            let dir = try TestTools.temporaryDirectory()
            let f1 = try follower("f1", dir, broker: broker)
            defer { f1.kill9() }
            #expect(f1.err.wait(for: "connected to", within: 120), "\(f1.transcript)")
            // The leader's state (as a leader would publish it): f1 goes to step 1 and arms.
            try broker.publish(
                "rig/g1/leader/state", #"{"leader":"lead","run":"r1","seq":5,"state":"running","steps":6,"next":{"f1":0},"missing":[],"sha":"x"}"#,
                retain: true)
            #expect(f1.err.wait(for: "armed at step 1", within: 120), "\(f1.transcript)")
            let now = Int64(Date().timeIntervalSince1970 * 1e9)
            func order(leader: String = "lead", seq: Int, atNs: Int64) -> String {
                #"{"leader":"\#(leader)","run":"r1","seq":\#(seq),"step":0,"atNs":\#(atNs),"sha":"x","rigs":["f1"]}"#
            }
            try broker.publish("rig/g1/leader/step", order(seq: 6, atNs: now - 1_000_000_000), expirySeconds: 10)
            #expect(f1.err.wait(for: "expired", within: 60), "\(f1.transcript)")
            try broker.publish("rig/g1/leader/step", order(seq: 4, atNs: now + 600_000_000_000), expirySeconds: 10)
            #expect(f1.err.wait(for: "out of order", within: 60), "\(f1.transcript)")
            try broker.publish("rig/g1/leader/step", order(leader: "mallory", seq: 9, atNs: now + 600_000_000_000), expirySeconds: 10)
            #expect(f1.err.wait(for: "not from the group's leader", within: 60), "\(f1.transcript)")
            // Another group's leader: this rig does not even hear it.
            try broker.publish("rig/g2/leader/step", order(seq: 10, atNs: now + 600_000_000_000), expirySeconds: 10)
            try broker.publish(
                "rig/g2/leader/state", #"{"leader":"lead","run":"r1","seq":11,"state":"running","steps":6,"next":{"f1":3},"missing":[],"sha":"x"}"#)
            // A valid order after them all is taken (so the refusals above were not a broken link).
            let soon = Int64(Date().timeIntervalSince1970 * 1e9) + 3_000_000_000
            try broker.publish("rig/g1/leader/step", order(seq: 7, atNs: soon), expirySeconds: 10)
            #expect(f1.err.wait(for: "step 1 shot at", within: 120), "\(f1.transcript)")
            #expect(f1.err.count("shot at") == 1, "\(f1.transcript)")
            #expect(!f1.transcript.contains("move to step 4"), "moved on another group's order: \(f1.transcript)")
            // STOP from anyone stops it.
            try broker.publish("rig/g1/stop", #"{"from":"test"}"#)
            #expect(f1.exitStatus() == 0, "\(f1.transcript)")
        }
    }

    @Test func theLeaderRefusesAClockOffByMoreThanTheBoundNamingTheRig() async throws {
        // Off the cooperative pool: the waits on processes block for seconds.
        try await onThread {
            let broker = try TestBroker()
            defer { broker.stop() }
            let dir = try TestTools.temporaryDirectory()
            let log = dir.appendingPathComponent("group.jsonl").path
            let f1 = try follower("f1", dir, broker: broker, environment: ["RIG_TEST_CLOCK_OFFSET_NS": "5000000"])
            defer { f1.kill9() }
            let lead = try leader(dir, broker: broker, followers: ["f1"], log: log, environment: ["RIG_TEST_CLOCK_OFFSET_NS": "0"])
            defer { lead.kill9() }
            #expect(lead.exitStatus() == 1, "\(lead.transcript)")
            #expect(lead.err.text.contains("the clock of rig f1 may be off by 5.000 ms"), "\(lead.transcript)")
            #expect(lead.err.text.contains("nothing moved"), "\(lead.transcript)")
            let frames = FileManager.default.fileExists(atPath: log) ? try groupFrames(log) : []
            #expect(frames.isEmpty)
        }
    }
}

/// `2026-06-21T19:04:10.250031Z` as Unix microseconds (the leader's log of its orders).
func microseconds(_ iso: String) -> Int64? {
    let parts = iso.split(separator: ".")
    guard parts.count == 2, let date = try? Date(String(parts[0]) + "Z", strategy: .iso8601), let fraction = Int64(parts[1].prefix(6)) else { return nil }
    return Int64(date.timeIntervalSince1970.rounded()) * 1_000_000 + fraction
}
