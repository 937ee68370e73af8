import Foundation
import Glibc
import RigTestSupport
import Testing

/// A group's keyframes path paused and resumed, with real `rig` processes on the simulated
/// rig through Debian's mosquitto on a free loopback port. Every wait is on a line of
/// output or an exit, with a generous deadline.
extension GroupEndToEndTests {
    /// A keyframes rig `name` (pan from `from` to `from + 40` over 20 s, a sim camera),
    /// shooting on the move every second into `NAME.jsonl`.
    func pathRig(_ name: String, from: Int, in dir: URL, args: [String]) throws -> (args: [String], trace: String, log: String) {
        _ = try writeGroupProgram(in: dir, rigName: name, steps: 1, camera: #"{"type": "sim"}"#)
        let path = dir.appendingPathComponent("\(name)-path.json").path
        try #"{"rig": "\#(name).json", "kind": "keyframes", "keyframes": {"pan": [{"t": 0, "value": \#(from)}, {"t": 20, "value": \#(from + 40)}]}}"#
            .write(toFile: path, atomically: true, encoding: .utf8)
        let trace = dir.appendingPathComponent("\(name).csv").path
        let log = dir.appendingPathComponent("\(name).jsonl").path
        return ([args[0], path] + args.dropFirst() + ["--trace", trace, "--interval", "1", "--log", log], trace, log)
    }

    /// When a line `marker … at <ISO time>` of `text` says it happened.
    func time(of marker: String, in text: String) -> Date? {
        guard let line = text.split(separator: "\n").last(where: { $0.contains(marker) }), let at = line.range(of: marker + " at ") else { return nil }
        let iso = ISO8601DateFormatter()
        iso.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return iso.date(from: String(line[at.upperBound...].prefix { !$0.isWhitespace }))
    }

    /// Seconds the loop of the rig whose log is `text` lost to stalls (its "the loop stalled
    /// S s" lines) after the last line with `marker`.
    func stalledSeconds(after marker: String, in text: String) -> Double {
        let lines = text.split(separator: "\n")
        guard let start = lines.lastIndex(where: { $0.contains(marker) }) else { return 0 }
        return lines[start...].reduce(0) { sum, line in
            guard let r = line.range(of: "the loop stalled ") else { return sum }
            return sum + (Double(line[r.upperBound...].prefix { !$0.isWhitespace }) ?? 0)
        }
    }

    /// A trace's frames within the limits (90 °/s, 180 °/s²) tick by tick, and a hold on
    /// the path (not at either end): at least `frames` frames at one position. `start`:
    /// where the rig stood before the trace's first frame (nil: at that frame).
    func expectHeldOnThePath(_ trace: String, from: Double, frames: Int = 30, start: [Double]? = [0]) throws {
        let parsed = try Trace(path: trace)
        let positions = parsed.frames(axes: ["pan"]).map { $0[0] }
        let checked = parsed.limitBreaks(
            [Trace.AxisLimits(name: "pan", maxVelocity: 90, maxAcceleration: 180)], tickSeconds: 0.01, start: start ?? [positions.first ?? 0])
        #expect(checked.breaks.isEmpty, "\(trace): \(checked.breaks.prefix(10))")
        var longest = 0
        var run = 0
        for (a, b) in zip(positions, positions.dropFirst()) {
            run = abs(a - b) < 1e-9 && b > from + 0.5 && b < from + 39.5 ? run + 1 : 0
            longest = max(longest, run)
        }
        #expect(longest >= frames, "\(trace): held at most \(longest) frames on the path")
        #expect((positions.max() ?? 0) > from + 39.9, "\(trace): the path did not end")
    }

    /// Every frame shot on the move once (20 s at 1 s: shots 1…20 as the camera is fired),
    /// none twice or skipped. (A path's frames on the move are not in the shot log yet: the
    /// rig's own output says each as it fires.)
    func expectEveryPathFrameOnce(_ rig: GroupRig) {
        let shots = rig.out.text.split(separator: "\n").compactMap { line -> Int? in
            guard let r = line.range(of: "📷 shot ") else { return nil }
            return Int(line[r.upperBound...].prefix { $0.isNumber })
        }
        #expect(shots == Array(1...20), "\(shots)")
    }

    /// The two rigs of the path tests through `broker`: f1 (`rig follow`, pan −40 → 0) and
    /// the leader (`rig play --lead`, pan 0 → 40), each shooting on the move every second.
    func pathGroup(_ broker: TestBroker, in dir: URL) throws -> (
        f1: (args: [String], trace: String, log: String), lead: (args: [String], trace: String, log: String)
    ) {
        let f1 = try pathRig("f1", from: -40, in: dir, args: ["follow", "--broker", broker.url, "--group", "g1", "--name", "f1", "--leader", "lead"])
        let lead = try pathRig(
            "lead", from: 0, in: dir,
            args: ["play", "--lead", broker.url, "--group", "g1", "--followers", "f1", "--name", "lead", "--lead-time", "0.5", "--wait-followers", "120"])
        return (f1, lead)
    }

    /// `pathGroup`'s two rigs started, f1 killed (SIGKILL) once it reported frame `shot`
    /// on the move (the leader saw both paths start); f1's state directory, for it to be
    /// started again.
    func pathGroupLosingF1(_ broker: TestBroker, in dir: URL, afterShot shot: Int) throws -> (
        f1Run: (args: [String], trace: String, log: String), leadRun: (args: [String], trace: String, log: String), f1State: URL, f1: GroupRig,
        lead: GroupRig
    ) {
        let (f1Run, leadRun) = try pathGroup(broker, in: dir)
        let f1State = dir.appendingPathComponent("state-f1")
        let f1 = try GroupRig(f1Run.args, state: f1State)
        let lead: GroupRig
        do { lead = try GroupRig(leadRun.args, state: dir.appendingPathComponent("state-lead")) } catch {
            f1.kill9()
            throw error
        }
        #expect(lead.err.wait(for: "rig f1 started its path", within: 120), "\(lead.transcript)")
        #expect(f1.out.wait(for: "shot \(shot)", within: 120), "\(f1.transcript)")
        f1.kill9()
        return (f1Run, leadRun, f1State, f1, lead)
    }

    /// Both paths ended within 0.1 s of each other, and what a loaded machine's stalls took
    /// from either rig after the lines `leadFrom` and `f1From` (a path's last 4 s play at
    /// their own pace: a stall there is not made up).
    func expectPathsEndedTogether(_ lead: GroupRig, _ f1: GroupRig, leadFrom: String, f1From: String) {
        guard let a = time(of: "the path ended", in: lead.err.text), let b = time(of: "the path ended", in: f1.err.text) else {
            Issue.record("no end: \(lead.transcript)\n\(f1.transcript)")
            return
        }
        let stalled = stalledSeconds(after: leadFrom, in: lead.err.text) + stalledSeconds(after: f1From, in: f1.err.text)
        #expect(
            abs(a.timeIntervalSince(b)) < 0.1 + stalled,
            "the paths ended \(a.timeIntervalSince(b)) s apart (\(stalled) s of stalls)\n\(lead.transcript)\n\(f1.transcript)")
    }

    /// The frame numbers a shot log holds of this rig's own frames on the move (all its runs).
    func loggedFrames(_ log: String) throws -> [Int] {
        try groupFrames(log).filter { $0.rig == nil }.map(\.step)
    }

    /// f1 is killed (SIGKILL) mid-path and started again with the same command: the group
    /// holds on its paths while f1 is missing; f1 back rejoins the path: it leads in from
    /// where it stands to its path's pose at its last frame's moment (read from its shot
    /// log), comes up along its path to the group's hold shooting the frames it missed,
    /// holds there at rest, and the group ramps in together: both paths end together, every
    /// frame on the move is in each rig's shot log once (f1's across its two runs), every
    /// frame of every trace is within the limits, and every rig exits 0.
    @Test func aFollowerRestartedDuringAKeyframesPathRejoinsItAndTheGroupGoesOn() async throws {
        try await onThread {
            let broker = try TestBroker()
            defer { broker.stop() }
            let dir = try TestTools.temporaryDirectory()
            // Mid-path: f1's fourth frame on the move (3 s into its path).
            var (f1Run, leadRun, f1State, f1, lead) = try pathGroupLosingF1(broker, in: dir, afterShot: 4)
            defer {
                lead.kill9()
                f1.kill9()
            }
            let firstRun = f1.transcript
            #expect(lead.err.wait(for: "rig f1 is lost (its will message)", within: 120), "\(lead.transcript)")
            #expect(lead.err.wait(for: "at rest on the path at", within: 120), "\(lead.transcript)")
            // The same command again.
            f1 = try GroupRig(f1Run.args, state: f1State)
            #expect(f1.err.wait(for: "rejoining the path the group holds at", within: 120), "\(f1.transcript)")
            // It read its last frame from its shot log (the same --log): it shoots the rest on its way up.
            #expect(f1.err.wait(for: "its last frame on the move was ", within: 120), "\(f1.transcript)")
            #expect(lead.err.wait(for: "rig f1 came back without its path (restarted): it rejoins it", within: 120), "\(lead.transcript)")
            #expect(f1.err.wait(for: "on the path from rest, on the group's clock", within: 120), "\(f1.transcript)")
            #expect(lead.err.wait(for: "resumed", within: 120), "\(lead.transcript)")
            #expect(lead.exitStatus() == 0, "\(lead.transcript)")
            #expect(f1.exitStatus() == 0, "\(f1.transcript)")
            // The leader held on its path; f1's second run led in from where it stood and
            // held at rest on its path before the ramp-in.
            try expectHeldOnThePath(leadRun.trace, from: 0)
            try expectHeldOnThePath(f1Run.trace, from: -40, frames: 20, start: nil)
            expectPathsEndedTogether(lead, f1, leadFrom: "at rest on the path at", f1From: "rejoining the path")
            // Every frame on the move once in each rig's log: none shot twice, none skipped.
            #expect(try loggedFrames(leadRun.log) == Array(1...20))
            let f1Frames = try loggedFrames(f1Run.log)
            #expect(f1Frames.sorted() == Array(1...20), "\(f1Frames)\nfirst run:\n\(firstRun)\nsecond run:\n\(f1.transcript)")
            expectEveryPathFrameOnce(lead)
        }
    }

    /// f1 is killed mid-path and started again with a program that is not its path (its
    /// stepped one): it cannot rejoin the path, so the group holds at rest on its paths and
    /// the leader says whom the hold waits for (not silently, forever); a STOP ends it:
    /// every rig parks and exits.
    @Test func aRigBackWithoutItsPathIsNamedWhileTheGroupHolds() async throws {
        try await onThread {
            let broker = try TestBroker()
            defer { broker.stop() }
            let dir = try TestTools.temporaryDirectory()
            var (f1Run, _, f1State, f1, lead) = try pathGroupLosingF1(broker, in: dir, afterShot: 3)
            defer {
                lead.kill9()
                f1.kill9()
            }
            #expect(lead.err.wait(for: "at rest on the path at", within: 120), "\(lead.transcript)")
            // The same follower, its stepped program instead of its path.
            var args = f1Run.args
            args[1] = dir.appendingPathComponent("f1-program.json").path
            if let i = args.firstIndex(of: "--interval") { args.removeSubrange(i...(i + 1)) }
            f1 = try GroupRig(args, state: f1State)
            #expect(lead.err.wait(for: "to come to rest there", within: 120), "\(lead.transcript)\n\(f1.transcript)")
            #expect(lead.err.text.contains("s: waiting for f1 ("), "\(lead.transcript)")
            #expect(f1.err.wait(for: "this rig's program has steps: it cannot rejoin the path", within: 120), "\(f1.transcript)")
            try broker.publish("rig/g1/stop", #"{"from": "test"}"#)
            #expect(lead.exitStatus() != nil, "\(lead.transcript)")
            #expect(f1.exitStatus() != nil, "\(f1.transcript)")
        }
    }

    /// The broker is killed mid-path and started again: every rig brakes within its limits
    /// and holds on its path, and once the broker is back the leader holds the group at one
    /// path time and ramps every rig in together: the paths end together, every frame on
    /// the move is shot once, and every rig exits 0.
    @Test func aBrokerRestartDuringAKeyframesPathHoldsEveryRigOnItsPathAndGoesOn() async throws {
        try await onThread {
            let broker = try TestBroker()
            defer { broker.stop() }
            let dir = try TestTools.temporaryDirectory()
            let (f1Run, leadRun) = try pathGroup(broker, in: dir)
            let f1 = try GroupRig(f1Run.args, state: dir.appendingPathComponent("state-f1"))
            let lead = try GroupRig(leadRun.args, state: dir.appendingPathComponent("state-lead"))
            defer {
                lead.kill9()
                f1.kill9()
            }
            #expect(lead.err.wait(for: "rig f1 started its path", within: 120), "\(lead.transcript)")
            // Mid-path: the leader's third frame on the move (2 s into its path).
            #expect(lead.out.wait(for: "shot 3", within: 120), "\(lead.transcript)")
            broker.kill()
            #expect(lead.err.wait(for: "holding on the path", within: 120), "\(lead.transcript)")
            #expect(f1.err.wait(for: "holding on the path", within: 120), "\(f1.transcript)")
            try broker.start()
            #expect(lead.err.wait(for: "resumed", within: 120), "\(lead.transcript)")
            #expect(lead.exitStatus() == 0, "\(lead.transcript)")
            #expect(f1.exitStatus() == 0, "\(f1.transcript)")
            try expectHeldOnThePath(leadRun.trace, from: 0)
            try expectHeldOnThePath(f1Run.trace, from: -40)
            expectPathsEndedTogether(lead, f1, leadFrom: "holding on the path", f1From: "holding on the path")
            expectEveryPathFrameOnce(lead)
            expectEveryPathFrameOnce(f1)
        }
    }
}
