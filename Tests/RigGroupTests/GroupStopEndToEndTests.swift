import Foundation
import Glibc
import RigTestSupport
import Testing

/// A group stopped mid-way, with real `rig` processes on the simulated rig through
/// Debian's mosquitto on a free loopback port: a rig lost during a keyframes path pauses
/// every rig on its path (and one back without its path stops them), and a frame cut
/// short by a stop is logged as interrupted on every rig.
/// Every wait is on a line of output or an exit, with a generous deadline.
extension GroupEndToEndTests {
    /// A keyframes program (`pan` from `from` to `from + 40` over 20 s) for rig `name`.
    func slowPath(_ name: String, from: Int, in dir: URL) throws -> String {
        _ = try writeGroupProgram(in: dir, rigName: name, steps: 1)
        let path = dir.appendingPathComponent("\(name)-path.json").path
        try #"{"rig": "\#(name).json", "kind": "keyframes", "keyframes": {"pan": [{"t": 0, "value": \#(from)}, {"t": 20, "value": \#(from + 40)}]}}"#
            .write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// f1 is killed (SIGKILL) while every rig's path runs: the leader names it and pauses
    /// the group: every rig that is left brakes within its limits to rest on its path (not
    /// at its end) and holds there, for as long as f1 is missing. A STOP then (from anyone)
    /// brakes and parks every rig left. (f1 started again rejoins the path: see
    /// `aFollowerRestartedDuringAKeyframesPathRejoinsItAndTheGroupGoesOn`.)
    @Test func aRigLostDuringAKeyframesPathPausesEveryRigOnItsPath() async throws {
        // Off the cooperative pool: the waits on processes block for seconds.
        try await onThread {
            let broker = try TestBroker()
            defer { broker.stop() }
            let dir = try TestTools.temporaryDirectory()
            let traces = ["lead", "f2"].map { dir.appendingPathComponent("\($0).csv").path }
            func follower(_ name: String, from: Int, trace: String? = nil) throws -> GroupRig {
                try GroupRig(
                    ["follow", try slowPath(name, from: from, in: dir), "--broker", broker.url, "--group", "g1", "--name", name, "--leader", "lead"]
                        + (trace.map { ["--trace", $0] } ?? []),
                    state: dir.appendingPathComponent("state-\(name)"))
            }
            let f1 = try follower("f1", from: -40)
            let f2 = try follower("f2", from: 20, trace: traces[1])
            let lead = try GroupRig(
                [
                    "play", try slowPath("lead", from: 0, in: dir), "--lead", broker.url, "--group", "g1", "--followers", "f1,f2", "--name", "lead",
                    "--lead-time", "0.5", "--trace", traces[0], "--wait-followers", "120",
                ], state: dir.appendingPathComponent("state-lead"))
            defer {
                lead.kill9()
                f1.kill9()
                f2.kill9()
            }
            // Every rig's path runs (the leader logs each start).
            #expect(lead.err.wait(for: "the path started at", within: 120), "\(lead.transcript)")
            #expect(lead.err.wait(for: "rig f1 started its path", within: 120), "\(lead.transcript)")
            #expect(lead.err.wait(for: "rig f2 started its path", within: 120), "\(lead.transcript)")
            // Its rigs run without real-time (--no-realtime): the shot timer says it fell back.
            #expect(lead.err.text.contains("shot timer at normal priority (the control loop did not get SCHED_FIFO"), "\(lead.transcript)")
            f1.kill9()
            #expect(lead.err.wait(for: "rig f1 is lost (its will message)", within: 120), "\(lead.transcript)")
            #expect(lead.err.wait(for: "waiting for f1 (lost)", within: 120), "\(lead.transcript)")
            #expect(lead.err.text.contains("group g1: paused on the path at "), "\(lead.transcript)")
            // Every rig left brakes to rest on its path and holds there.
            #expect(lead.err.wait(for: "at rest on the path at", within: 120), "\(lead.transcript)")
            #expect(f2.err.wait(for: "at rest on the path at", within: 120), "\(f2.transcript)")
            // Nothing goes on while f1 is missing.
            #expect(!lead.err.text.contains("resumed"), "\(lead.transcript)")
            // f1 stays away: a STOP from anyone brakes and parks every rig left.
            try broker.publish("rig/g1/stop", #"{"from": "test"}"#)
            #expect(lead.err.wait(for: "STOP from test", within: 120), "\(lead.transcript)")
            #expect(lead.exitStatus() != nil, "\(lead.transcript)")
            #expect(f2.exitStatus() != nil, "\(f2.transcript)")
            // Each left rig: within its limits (90 °/s, 180 °/s²) every tick, held on its path
            // (at one pose for at least 0.1 s, away from both ends: it holds from its "at rest"
            // until the STOP), never at its end, then parked at 0.
            for (trace, from) in zip(traces, [0.0, 20.0]) {
                let end = from + 40
                let parsed = try Trace(path: trace)
                let positions = parsed.frames(axes: ["pan"]).map { $0[0] }
                let highest = try #require(positions.max())
                #expect(highest > from + 1e-3, "\(trace): its path never ran")
                #expect(highest < end - 1, "\(trace): reached \(highest) of the path's \(end): it did not stop")
                #expect(abs((positions.last ?? 99) - 0) < 1e-3, "\(trace): not parked")
                var longest = 0
                var run = 0
                for (a, b) in zip(positions, positions.dropFirst()) {
                    run = abs(a - b) < 1e-9 && b > from + 1e-3 && b < end - 1 ? run + 1 : 0
                    longest = max(longest, run)
                }
                #expect(longest >= 10, "\(trace): held at most \(longest) frames on its path")
                let checked = parsed.limitBreaks([Trace.AxisLimits(name: "pan", maxVelocity: 90, maxAcceleration: 180)], tickSeconds: 0.01, start: [0])
                #expect(checked.breaks.isEmpty, "\(trace): \(checked.breaks.prefix(10))")
            }
        }
    }

    /// f1's own program stops (its process stopped 1.5 s mid-path: a stall while moving
    /// stops a program from rest): f1 stops the group at once, and the leader, which kept
    /// waiting on it for ever before, brakes, parks and exits.
    @Test func aRigWhoseOwnProgramStopsStopsTheGroup() async throws {
        // Off the cooperative pool: the waits on processes block for seconds.
        try await onThread {
            let broker = try TestBroker()
            defer { broker.stop() }
            let dir = try TestTools.temporaryDirectory()
            // f1 sweeps 80° in 12 s (up to about 10 °/s mid-path: moving, by the stall rule's measure).
            _ = try writeGroupProgram(in: dir, rigName: "f1", steps: 1)
            let fast = dir.appendingPathComponent("f1-fast.json").path
            try #"{"rig": "f1.json", "kind": "keyframes", "keyframes": {"pan": [{"t": 0, "value": -40}, {"t": 12, "value": 40}]}}"#
                .write(toFile: fast, atomically: true, encoding: .utf8)
            let f1 = try GroupRig(
                ["follow", fast, "--broker", broker.url, "--group", "g1", "--name", "f1", "--leader", "lead"], state: dir.appendingPathComponent("state-f1"))
            let lead = try GroupRig(
                [
                    "play", try slowPath("lead", from: 0, in: dir), "--lead", broker.url, "--group", "g1", "--followers", "f1", "--name", "lead",
                    "--lead-time", "0.5", "--wait-followers", "120",
                ], state: dir.appendingPathComponent("state-lead"))
            defer {
                lead.kill9()
                f1.kill9()
            }
            #expect(lead.err.wait(for: "rig f1 started its path", within: 120), "\(lead.transcript)")
            // Mid-path (its progress line, about 5 s into its run, 4 s into the path).
            #expect(f1.out.wait(for: " playing ", within: 120), "\(f1.transcript)")
            let pid = try #require(f1.pid)
            // The fault: f1's process stopped mid-path for 1.5 s (its loop stalls while moving).
            #expect(kill(pid, SIGSTOP) == 0)
            usleep(1_500_000)
            #expect(kill(pid, SIGCONT) == 0)
            #expect(f1.err.wait(for: "stopping from rest", within: 120), "\(f1.transcript)")
            #expect(lead.err.wait(for: "STOP from f1", within: 120), "\(lead.transcript)")
            #expect(lead.exitStatus() != nil, "the leader did not end: \(lead.transcript)")
            #expect(f1.exitStatus() != nil, "\(f1.transcript)")
            // Stopped well before its 20 s path's end.
            #expect(lead.out.text.contains("program stopped"), "\(lead.transcript)")
            #expect(!lead.out.text.contains("20.0/20.0 s"), "\(lead.transcript)")
        }
    }

    /// A STOP while every rig's camera exposes a group's frame (10 s): each rig's log has
    /// that frame as interrupted (the camera may have saved it; --resume shoots it again),
    /// and no rig logs it as shot.
    @Test func aFrameCutShortInAGroupIsLoggedAsInterruptedOnEveryRig() async throws {
        // Off the cooperative pool: the waits on processes block for seconds.
        try await onThread {
            let broker = try TestBroker()
            defer { broker.stop() }
            let dir = try TestTools.temporaryDirectory()
            let log = dir.appendingPathComponent("group.jsonl").path
            let ownLog = dir.appendingPathComponent("f1.jsonl").path
            let camera = #"{"type": "sim", "focusMs": 100, "shutterMs": 10000, "afterShotMs": 100}"#
            let f1 = try follower("f1", dir, broker: broker, camera: camera, log: ownLog)
            let lead = try leader(dir, broker: broker, followers: ["f1"], log: log, camera: camera)
            defer {
                lead.kill9()
                f1.kill9()
            }
            #expect(lead.err.wait(for: "step 1: the camera fired at the group's time", within: 120), "\(lead.transcript)")
            #expect(f1.err.wait(for: "step 1: the camera fired at the group's time", within: 120), "\(f1.transcript)")
            try broker.publish("rig/g1/stop", #"{"from":"test"}"#)
            #expect(lead.exitStatus() == 0, "\(lead.transcript)")
            #expect(f1.exitStatus() == 0, "\(f1.transcript)")
            for (path, rig) in [(log, lead), (ownLog, f1)] {
                let own = try shotEvents(path).filter { $0["rig"] == nil }
                #expect(own.count == 1, "\(path): \(own) \(rig.transcript)")
                #expect(own.first?["step"] as? Int == 1 && own.first?["interrupted"] as? Bool == true, "\(path): \(own)")
                #expect(rig.err.text.contains("the run stopped during the shot at step 1: logged as interrupted"), "\(rig.transcript)")
            }
        }
    }

    /// The `shot` events of a shot log, as JSON objects.
    func shotEvents(_ path: String) throws -> [[String: Any]] {
        try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").compactMap { line in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], object["event"] as? String == "shot" else {
                return nil
            }
            return object
        }
    }
}
