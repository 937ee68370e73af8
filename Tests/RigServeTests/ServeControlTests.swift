import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import RigCore
import RigRuntime
import RigTestSupport
import Testing

@testable import RigServe

/// Who may move the rig, through Hummingbird's router on the real loop: control is a key
/// the server issued, STOP latches, stale or reordered jogs and double taps move nothing,
/// and a program laid out for another rig is refused.
@Suite(.serialized) struct ServeControlTests {
    @Test func theControlKeyIsSecretAndANameProvesNothing() async throws {
        let fixture = try ServeFixture()
        defer { fixture.finish() }
        try await fixture.application.test(.router) { client in
            let first = try await client.execute(
                uri: "/api/goto", method: .post, headers: .client("phone-a"), body: jsonBody(#"{"pose": {"pan": 5}}"#))
            #expect(first.status == .accepted)
            let key = try #require(first.controlKey)
            #expect(key.count == 32 && key != "phone-a")
            #expect(first.headers[.setCookie]?.contains("rig_control=\(key)") == true && first.headers[.setCookie]?.contains("HttpOnly") == true)
            // What anyone can see names the holder, never its key.
            let watched = try await client.execute(uri: "/api/status", method: .get)
            #expect(watched.json["controller"] as? String == "phone-a")
            #expect(!watched.text.contains(key))
            // Sending the holder's name (header or cookie), or a made-up key, takes nothing.
            var spoofs: [HTTPFields] = [.client("phone-a"), .client("phone-a", key: "0123456789abcdef0123456789abcdef")]
            spoofs.append([.cookie: "rig_client=phone-a", .contentType: "application/json"])
            spoofs.append([.cookie: "rig_control=phone-a", .contentType: "application/json"])
            for headers in spoofs {
                let refused = try await client.execute(uri: "/api/goto", method: .post, headers: headers, body: jsonBody(#"{"pose": {"pan": -30}}"#))
                #expect(refused.status == .conflict)
                #expect(refused.json["holder"] as? String == "phone-a")
                #expect(!refused.text.contains(key) && refused.controlKey == nil)
            }
            try await fixture.waitStatus { $0.state == .idle && $0.pose["pan"] == 5 }
            // The key (header or cookie) is control.
            #expect(
                try await client.execute(uri: "/api/goto", method: .post, headers: .client("x", key: key), body: jsonBody(#"{"pose": {"pan": 6}}"#))
                    .status == .accepted)
            #expect(
                try await client.execute(
                    uri: "/api/goto", method: .post, headers: [.cookie: "rig_control=\(key)", .contentType: "application/json"],
                    body: jsonBody(#"{"pose": {"pan": 7}}"#)
                ).status == .accepted)
            try await fixture.waitStatus { $0.state == .idle && $0.pose["pan"] == 7 }
        }
    }

    @Test func watchingDoesNotKeepControlButTheHoldersRequestsDo() async throws {
        let fixture = try ServeFixture()
        defer { fixture.finish() }
        try await fixture.application.test(.router) { client in
            let first = try await client.execute(uri: "/api/goto", method: .post, headers: .client("a"), body: jsonBody(#"{"pose": {"pan": 2}}"#))
            let key = try #require(first.controlKey)
            // The holder says it is there (its status requests with the key) for 20 s.
            for _ in 0..<4 {
                fixture.quietFor(seconds: 5)
                _ = try await client.execute(uri: "/api/status", method: .get, headers: .client("a", key: key))
            }
            #expect(
                try await client.execute(uri: "/api/jog", method: .post, headers: .client("b"), body: jsonBody(#"{"velocity": {"pan": 0}}"#))
                    .status == .conflict)
            // Then it goes quiet; others watching (no key) do not keep its control.
            for _ in 0..<3 {
                fixture.quietFor(seconds: 4)
                _ = try await client.execute(uri: "/api/status", method: .get, headers: .client("a"))
            }
            #expect(fixture.console.status(controller: fixture.parts.lease.current(nowSeconds: 1e9)).controller == nil)
            let taken = try await client.execute(uri: "/api/goto", method: .post, headers: .client("b"), body: jsonBody(#"{"pose": {"pan": 0}}"#))
            #expect(taken.status == .accepted)
        }
    }

    @Test func aRefusedPlayTakesNoControl() async throws {
        let fixture = try ServeFixture(programs: ["broken.json": #"{"rig": "r.json", "kind": "keyframes", "keyframes": [}"#])
        defer { fixture.finish() }
        try await fixture.application.test(.router) { client in
            for program in ["broken.json", "missing.json"] {
                let refused = try await client.execute(uri: "/api/play", method: .post, headers: .client("a"), body: jsonBody(#"{"program": "\#(program)"}"#))
                #expect(refused.status == .unprocessableContent || refused.status == .notFound)
                #expect(refused.controlKey == nil)
            }
            #expect(
                try await client.execute(uri: "/api/goto", method: .post, headers: .client("b"), body: jsonBody(#"{"pose": {"pan": 1}}"#))
                    .status == .accepted)
        }
    }

    /// A finger still on the pad after STOP: its press's next jogs move nothing; a new
    /// press does.
    @Test func stopLatchesThePressUnderWay() async throws {
        let fixture = try ServeFixture()
        defer { fixture.finish() }
        try await fixture.application.test(.router) { client in
            func jog(_ press: String, _ seq: Int, _ t: Int, pan: Double, key: String? = nil, began: Double? = nil) async throws -> TestResponse {
                let began = began ?? fixture.clockMilliseconds
                return try await client.execute(
                    uri: "/api/jog", method: .post, headers: .client("a", key: key),
                    body: jsonBody(#"{"velocity": {"pan": \#(pan)}, "press": "\#(press)", "seq": \#(seq), "t": \#(t), "began": \#(began)}"#))
            }
            let started = try await jog("p1", 1, 0, pan: 0.5)
            #expect(started.status == .accepted)
            let key = try #require(started.controlKey)
            // Under way (the pose persists; the jogging state may be over by the next look).
            try await fixture.waitStatus { ($0.pose["pan"] ?? 0) > 0 }
            #expect(try await client.execute(uri: "/api/stop", method: .post, headers: .client("b")).status == .accepted)
            // The pad's next request, 100 ms later in the same press: refused, nothing moves.
            let latched = try await jog("p1", 2, 100, pan: 0.5, key: key)
            #expect(latched.status == .conflict)
            #expect((latched.json["error"] as? String)?.contains("lift") == true)
            let stopped = try await fixture.waitStatus { $0.state == .idle }
            try await fixture.waitTicks(40)
            #expect(fixture.console.status(controller: nil).pose == stopped.pose)
            #expect(fixture.console.loopStatus?.velocities.allSatisfy { $0 == 0 } == true)
            // A press that began before the STOP (a finger down during a stall, its first
            // request late) moves nothing either.
            let early = try await jog("p0", 1, 0, pan: 0.5, began: fixture.clockMilliseconds - 10)
            #expect(early.status == .conflict && (early.json["error"] as? String)?.contains("before the last STOP") == true, "\(early.text)")
            // A new press is a deliberate new action.
            fixture.quietFor(seconds: 0.05)
            #expect(try await jog("p2", 1, 0, pan: 0.5).status == .accepted)
            let stoppedPan = stopped.pose["pan"] ?? 0
            try await fixture.waitStatus { ($0.pose["pan"] ?? 0) > stoppedPan }
        }
    }

    /// Jogs queued through a link stall and delivered together move nothing; nor does one
    /// that arrives out of order. A stop (all zero) always passes.
    @Test func staleAndReorderedJogsAreDropped() async throws {
        let fixture = try ServeFixture()
        defer { fixture.finish() }
        try await fixture.application.test(.router) { client in
            let began = fixture.clockMilliseconds
            func jog(_ seq: Int, _ t: Int, pan: Double) async throws -> TestResponse {
                try await client.execute(
                    uri: "/api/jog", method: .post, headers: .client("a", key: nil),
                    body: jsonBody(#"{"velocity": {"pan": \#(pan)}, "press": "p", "seq": \#(seq), "t": \#(t), "began": \#(began)}"#))
            }
            let first = try await jog(1, 0, pan: 0.2)
            #expect(first.status == .accepted)
            let key = try #require(first.controlKey)
            func keyed(_ seq: Int, _ t: Int, pan: Double) async throws -> TestResponse {
                try await client.execute(
                    uri: "/api/jog", method: .post, headers: .client("a", key: key),
                    body: jsonBody(#"{"velocity": {"pan": \#(pan)}, "press": "p", "seq": \#(seq), "t": \#(t)}"#))
            }
            fixture.quietFor(seconds: 0.1)
            #expect(try await keyed(2, 100, pan: 0.2).status == .accepted)
            // A 3 s stall: requests sent at 200…500 ms arrive at 3.1 s.
            fixture.quietFor(seconds: 3)
            for (seq, t) in [(3, 200), (4, 300), (5, 400)] {
                let stale = try await keyed(seq, t, pan: 1)
                #expect(stale.status == .conflict)
                #expect((stale.json["error"] as? String)?.contains("stale") == true)
            }
            // Out of order (an earlier seq after a later one), though fresh.
            #expect(try await keyed(5, 3100, pan: 1).status == .conflict)
            // A fresh one in order moves; the lifted finger's zero always stops.
            #expect(try await keyed(6, 3100, pan: 0.2).status == .accepted)
            #expect(try await keyed(1, 0, pan: 0).status == .accepted)
            try await fixture.waitStatus { $0.state == .idle }
        }
    }

    /// A press whose first request is late (a finger that went down during a Wi-Fi stall,
    /// its requests released together) moves nothing: `began` is the reference. A press
    /// without `began`, or one ahead of the server's clock, is refused.
    @Test func aPressBegunDuringAStallIsStaleFromItsFirstRequest() async throws {
        let fixture = try ServeFixture()
        defer { fixture.finish() }
        try await fixture.application.test(.router) { client in
            func jog(_ press: String, _ seq: Int, _ t: Int, began: Double?) async throws -> TestResponse {
                let beganField = began.map { #", "began": \#($0)"# } ?? ""
                return try await client.execute(
                    uri: "/api/jog", method: .post, headers: .client("a"),
                    body: jsonBody(#"{"velocity": {"pan": 0.5}, "press": "\#(press)", "seq": \#(seq), "t": \#(t)\#(beganField)}"#))
            }
            // Pressed 2 s ago; its first three requests (sent at 0, 100, 200 ms) arrive now.
            let began = fixture.clockMilliseconds - 2000
            for (seq, t) in [(1, 0), (2, 100), (3, 200)] {
                let late = try await jog("stalled", seq, t, began: began)
                #expect(late.status == .conflict && (late.json["error"] as? String)?.contains("stale") == true, "\(late.text)")
            }
            let missing = try await jog("no-began", 1, 0, began: nil)
            #expect(missing.status == .conflict && (missing.json["error"] as? String)?.contains("began") == true, "\(missing.text)")
            let ahead = try await jog("ahead", 1, 0, began: fixture.clockMilliseconds + 5000)
            #expect(ahead.status == .conflict && (ahead.json["error"] as? String)?.contains("ahead") == true, "\(ahead.text)")
            // Numbers no page sends (schemathesis found a `began` of 5.5e32 ms trapping the
            // reply's Int conversion and killing the server): refused, and the server answers on.
            for (t, began) in [(0.0, 5.507514202687351e32), (1e300, 0), (-1e300, 0), (0, -1)] {
                let wild = try await client.execute(
                    uri: "/api/jog", method: .post, headers: .client("a"),
                    body: jsonBody(#"{"velocity": {"pan": 0.5}, "press": "wild", "seq": 1, "t": \#(t), "began": \#(began)}"#))
                #expect(wild.status == .badRequest, "\(wild.text)")
            }
            // The guard itself never traps, whatever it is handed.
            let guardItself = JogGuard(maxAgeSeconds: 0.25)
            for began in [5.5e32, -5.5e32, 1e13] {
                let verdict = guardItself.judge(press: "g\(began)", seq: 1, sentMilliseconds: -1e300, beganMilliseconds: began, stopping: false, nowSeconds: 1)
                #expect(verdict != .accept)
            }
            try await fixture.waitTicks(30)
            #expect(fixture.console.status(controller: nil).pose["pan"] == 0)
            // A fresh press moves.
            #expect(try await jog("fresh", 1, 0, began: fixture.clockMilliseconds).status == .accepted)
            try await fixture.waitStatus { ($0.pose["pan"] ?? 0) > 0 }
        }
    }

    /// After a STOP, a client that jogs without a press (a script, a gamepad bridge, an
    /// older page), even one that kept its control key, moves nothing: it must start a new
    /// press, which then moves.
    @Test func afterStopAJogWithoutAPressMovesNothing() async throws {
        let fixture = try ServeFixture()
        defer { fixture.finish() }
        try await fixture.application.test(.router) { client in
            let first = try await client.execute(uri: "/api/jog", method: .post, headers: .client("script"), body: jsonBody(#"{"velocity": {"pan": 0.5}}"#))
            #expect(first.status == .accepted)
            let key = try #require(first.controlKey)
            try await fixture.waitStatus { ($0.pose["pan"] ?? 0) > 0 }
            #expect(try await client.execute(uri: "/api/stop", method: .post, headers: .client("phone")).status == .accepted)
            let rest = try await fixture.waitStatus { $0.state == .idle }
            for _ in 0..<5 {
                fixture.quietFor(seconds: 0.1)
                let again = try await client.execute(
                    uri: "/api/jog", method: .post, headers: .client("script", key: key), body: jsonBody(#"{"velocity": {"pan": 0.5}}"#))
                #expect(again.status == .conflict && (again.json["error"] as? String)?.contains("new press") == true, "\(again.text)")
            }
            try await fixture.waitTicks(30)
            #expect(fixture.console.status(controller: nil).pose == rest.pose)
            #expect(fixture.console.status(controller: nil).controller == nil)
            let began = fixture.clockMilliseconds
            let press = try await client.execute(
                uri: "/api/jog", method: .post, headers: .client("script"),
                body: jsonBody(#"{"velocity": {"pan": 0.5}, "press": "new", "seq": 1, "t": 0, "began": \#(began)}"#))
            #expect(press.status == .accepted, "\(press.text)")
            let restPan = rest.pose["pan"] ?? 0
            try await fixture.waitStatus { ($0.pose["pan"] ?? 0) > restPan }
        }
    }

    /// A double tap on Next during a move is one step, not two.
    @Test func nextIsTakenOnlyWhileWaitingAndForTheStepItNames() async throws {
        let steps =
            #"{"rig": "r.json", "kind": "steps", "trigger": "keyboard", "steps": [{"pose": {"pan": 10}, "settleSeconds": 0}, {"pose": {"pan": 40}, "settleSeconds": 0.5}, {"pose": {"pan": 50}, "settleSeconds": 0}]}"#
        let fixture = try ServeFixture(programs: ["three.json": steps])
        defer { fixture.finish() }
        try await fixture.application.test(.router) { client in
            let play = try await client.execute(uri: "/api/play", method: .post, headers: .client("a"), body: jsonBody(#"{"program": "three.json"}"#))
            let key = try #require(play.controlKey)
            try await fixture.waitStatus { $0.state == .waiting && $0.step == 1 }
            #expect(
                try await client.execute(uri: "/api/next", method: .post, headers: .client("a", key: key), body: jsonBody(#"{"step": 2}"#))
                    .status == .conflict)
            #expect(
                try await client.execute(uri: "/api/next", method: .post, headers: .client("a", key: key), body: jsonBody(#"{"step": 1}"#))
                    .status == .accepted)
            // The second tap of the double tap: the rig is on its way (or the step moved on).
            let second = try await client.execute(uri: "/api/next", method: .post, headers: .client("a", key: key), body: jsonBody(#"{"step": 1}"#))
            #expect(second.status == .conflict)
            try await fixture.waitStatus { $0.state == .playing && $0.step == 2 }
            let during = try await client.execute(uri: "/api/next", method: .post, headers: .client("a", key: key))
            #expect(during.status == .conflict, "\(during.text)")
            // Step 2 waits: it was not skipped.
            try await fixture.waitStatus { $0.state == .waiting && $0.step == 2 && $0.pose["pan"] == 40 }
        }
    }

    /// A goto's and a jog's reply carry the accepted command's state, not the "idle" of the
    /// tick before the loop took it up (the page flickered).
    @Test func aMoveReplySaysTheRigMoves() async throws {
        let fixture = try ServeFixture()
        defer { fixture.finish() }
        try await fixture.application.test(.router) { client in
            let goto = try await client.execute(uri: "/api/goto", method: .post, headers: .client("a"), body: jsonBody(#"{"pose": {"pan": 20}}"#))
            #expect(goto.status == .accepted)
            #expect((goto.json["status"] as? [String: Any])?["state"] as? String == "moving", "\(goto.text)")
            let key = try #require(goto.controlKey)
            try await fixture.waitStatus { $0.state == .idle && $0.pose["pan"] == 20 }
            let jog = try await client.execute(
                uri: "/api/jog", method: .post, headers: .client("a", key: key),
                body: jsonBody(#"{"velocity": {"pan": 0.5}, "press": "p1", "seq": 1, "t": 0, "began": \#(fixture.clockMilliseconds)}"#)
            )
            #expect(jog.status == .accepted)
            #expect(jog.json["state"] as? String == "jogging", "\(jog.text)")
        }
    }

    /// Another client's STOP is named in the status (who, which program, which step) so the
    /// phone whose run it was is told; the next program clears it.
    @Test func aStopByAnotherClientIsNamedInTheStatus() async throws {
        let steps =
            #"{"rig": "r.json", "kind": "steps", "trigger": "keyboard", "steps": [{"pose": {"pan": 10}}, {"pose": {"pan": 20}}]}"#
        let fixture = try ServeFixture(programs: ["wait.json": steps])
        defer { fixture.finish() }
        try await fixture.application.test(.router) { client in
            #expect(
                try await client.execute(uri: "/api/play", method: .post, headers: .client("phone a"), body: jsonBody(#"{"program": "wait.json"}"#)).status
                    == .accepted)
            try await fixture.waitStatus { $0.state == .waiting && $0.step == 1 }
            #expect(try await client.execute(uri: "/api/stop", method: .post, headers: .client("phone b")).status == .accepted)
            let stopped = try await fixture.waitStatus { $0.state == .idle && $0.program == nil }
            #expect(stopped.lastStop == ServeStatus.LastStop(by: "phone b", program: "wait.json", step: 1))
            let status = try await client.execute(uri: "/api/status", method: .get, headers: .client("phone a"))
            #expect((status.json["lastStop"] as? [String: Any])?["by"] as? String == "phone b")
            #expect(
                try await client.execute(uri: "/api/play", method: .post, headers: .client("phone a"), body: jsonBody(#"{"program": "wait.json"}"#)).status
                    == .accepted)
            let again = try await fixture.waitStatus { $0.state == .waiting }
            #expect(again.lastStop == nil)
        }
    }

    /// Paused, the ETA holds: the run will end that much later, it does not count down.
    @Test func theETAHoldsWhilePaused() async throws {
        let steps =
            #"{"rig": "r.json", "kind": "steps", "trigger": "auto", "settleSeconds": 0.2, "steps": [{"pose": {"pan": 10}}, {"pose": {"pan": 20}}, {"pose": {"pan": 30}}]}"#
        let fixture = try ServeFixture(programs: ["auto.json": steps])
        defer { fixture.finish() }
        try await fixture.application.test(.router) { client in
            let play = try await client.execute(uri: "/api/play", method: .post, headers: .client("a"), body: jsonBody(#"{"program": "auto.json"}"#))
            let key = try #require(play.controlKey)
            #expect(try await client.execute(uri: "/api/pause", method: .post, headers: .client("a", key: key)).status == .accepted)
            // Held at step 1 (a pause lets the move there finish).
            let arrived = try await fixture.waitStatus { $0.state == .paused && $0.pose["pan"] == 10 && $0.etaSeconds != nil }
            // Once its 0.2-s settle is over (settling is part of the program's time, and counts down).
            let paused = try await fixture.waitStatus { $0.state == .paused && ($0.elapsedSeconds ?? 0) >= (arrived.elapsedSeconds ?? 0) + 0.3 }
            // A second of program time later, still paused: the same ETA (to its rounding).
            let later = try await fixture.waitStatus { $0.state == .paused && ($0.elapsedSeconds ?? 0) >= (paused.elapsedSeconds ?? 0) + 1 }
            #expect(abs((later.etaSeconds ?? 0) - (paused.etaSeconds ?? 0)) <= 0.11, "ETA \(paused.etaSeconds ?? -1) → \(later.etaSeconds ?? -1)")
        }
    }

    /// A one-axis rig embedded in a program dropped into the folder while another plays:
    /// listed as not playable, refused with 422, and the server and the run go on.
    @Test func aProgramForAnotherRigIsNotPlayableAndCrashesNothing() async throws {
        let axis =
            #"{"name": "tilt", "channel": 1, "pulseUs": [1000, 2000], "angleDeg": [-45, 45], "softLimits": [-40, 45], "maxVelocity": 40, "maxAcceleration": 80}"#
        let other =
            #"{"rig": {"output": {"type": "sim"}, "axes": [\#(axis)]}, "kind": "keyframes", "keyframes": {"tilt": [{"t": 0, "value": 0}, {"t": 2, "value": 10}]}}"#
        // The served rig's axes in the other order: "pan" would move channel 0's axis.
        let swapped =
            axis.replacingOccurrences(of: "\"channel\": 1", with: "\"channel\": 0") + ", " + axis.replacingOccurrences(of: "\"tilt\"", with: "\"pan\"")
        let renamed =
            #"{"rig": {"output": {"type": "sim"}, "axes": [\#(swapped)]}, "kind": "keyframes", "keyframes": {"pan": [{"t": 0, "value": 0}, {"t": 2, "value": 10}]}}"#
        let slow = #"{"rig": "r.json", "kind": "keyframes", "keyframes": {"pan": [{"t": 0, "value": 0}, {"t": 3, "value": 20}]}}"#
        let fixture = try ServeFixture(programs: ["slow.json": slow])
        defer { fixture.finish() }
        try await fixture.application.test(.router) { client in
            let play = try await client.execute(uri: "/api/play", method: .post, headers: .client("a"), body: jsonBody(#"{"program": "slow.json"}"#))
            #expect(play.status == .accepted)
            try await fixture.waitStatus { $0.state == .playing }
            let folder = fixture.directory.appendingPathComponent("programs")
            try other.write(to: folder.appendingPathComponent("other.json"), atomically: true, encoding: .utf8)
            try renamed.write(to: folder.appendingPathComponent("renamed.json"), atomically: true, encoding: .utf8)
            let listed = try await client.execute(uri: "/api/programs", method: .get)
            let programs = try #require(listed.json["programs"] as? [[String: Any]])
            for name in ["other.json", "renamed.json"] {
                let entry = try #require(programs.first { $0["file"] as? String == name })
                #expect(entry["feasible"] as? Bool == false)
                #expect((entry["message"] as? String)?.contains("not playable on this rig") == true, "\(entry["message"] ?? "")")
            }
            // The run went on to its end and parked.
            try await fixture.waitStatus { $0.state == .idle && $0.program == nil }
            #expect(fixture.console.status(controller: nil).pose == ["pan": 0, "tilt": 0])
            #expect(fixture.console.status(controller: nil).error == nil)
            let refused = try await client.execute(uri: "/api/play", method: .post, headers: .client("b"), body: jsonBody(#"{"program": "other.json"}"#))
            #expect(refused.status == .unprocessableContent)
            #expect((refused.json["error"] as? String)?.contains("axes (\"tilt\")") == true, "\(refused.text)")
            try await fixture.waitTicks(30)
            #expect(fixture.console.status(controller: nil).pose == ["pan": 0, "tilt": 0])
        }
    }
}

extension ServeControlTests {
    /// STOP brakes and parks and the servos hold; shut down is the one act that goes on to
    /// the outputs' safe state and ends the session. Only the controller may; a watcher
    /// gets 409 and nothing ends.
    @Test func shutDownParksReleasesTheServosAndEndsTheSession() async throws {
        let fixture = try ServeFixture()
        defer { fixture.finish() }
        try await fixture.application.test(.router) { client in
            let moving = try await client.execute(
                uri: "/api/goto", method: .post, headers: .client("phone-a"), body: jsonBody(#"{"pose": {"pan": 30}}"#))
            let key = try #require(moving.controlKey)
            let watcher = try await client.execute(uri: "/api/shutdown", method: .post, headers: .client("phone-b"))
            #expect(watcher.status == .conflict)
            #expect(!fixture.console.hasEnded)
            let shut = try await client.execute(uri: "/api/shutdown", method: .post, headers: .client("phone-a", key: key))
            #expect(shut.status == .accepted)
            // The session ends (brake, park, safe state) and says how: a stop request, no fault.
            let summary = try #require(fixture.console.waitUntilEnded())
            #expect(summary.end == .stopRequested && summary.loop.fault == nil)
            #expect(abs(summary.loop.finalPose[0]) < 1e-6, "parked at pan 0, not left at \(summary.loop.finalPose[0])")
        }
    }
}
