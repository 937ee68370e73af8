import Foundation
import Hummingbird
import HummingbirdTesting
import RigCore
import RigRuntime
import RigTestSupport
import Testing

@testable import RigServe

/// The API through Hummingbird's router, on the simulated rig running the real loop.
@Suite(.serialized) struct ServeRouteTests {
    static let token = AccessToken(text: String(repeating: "ab12", count: 16))!

    @Test func aNonLoopbackListenerAnswers401WithoutTheTokenAndNothingMoves() async throws {
        let fixture = try ServeFixture(listen: "0.0.0.0:8080", token: Self.token)
        defer { fixture.finish() }
        try await fixture.application.test(.router) { client in
            let refused = try await client.execute(
                uri: "/api/jog", method: .post, headers: .client("a"),
                body: jsonBody(#"{"velocity": {"pan": 1}}"#))
            #expect(refused.status == .unauthorized)
            #expect((refused.json["error"] as? String)?.contains("token") == true)
            let wrong = try await client.execute(
                uri: "/api/goto", method: .post,
                headers: .client("a", token: String(repeating: "ab12", count: 15) + "ab13"),
                body: jsonBody(#"{"pose": {"pan": 30}}"#))
            #expect(wrong.status == .unauthorized)
            #expect(try await client.execute(uri: "/api/status", method: .get).status == .unauthorized)
            // Nothing moved: 50 ticks later the rig is still at home and idle.
            try await fixture.waitTicks(50)
            let status = fixture.console.status(controller: nil)
            #expect(status.state == .idle && status.pose == ["pan": 0, "tilt": 0])

            let allowed = try await client.execute(uri: "/api/status", method: .get, headers: .client("a", token: Self.token.text))
            #expect(allowed.status == .ok)
            #expect(allowed.json["state"] as? String == "idle")
            // The page sets the cookie from ?token= and drops the token from the address.
            let page = try await client.execute(uri: "/?token=\(Self.token.text)", method: .get)
            #expect(page.status == .seeOther)
            let cookie = try #require(page.headers[.setCookie])
            #expect(cookie.contains("rig_token=\(Self.token.text)") && cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"))
            let withCookie = try await client.execute(uri: "/api/status", method: .get, headers: [.cookie: "rig_token=\(Self.token.text)"])
            #expect(withCookie.status == .ok)
            #expect(withCookie.headers[.accessControlAllowOrigin] == nil)
        }
    }

    @Test func aLoopbackListenerNeedsNoToken() async throws {
        let fixture = try ServeFixture()
        defer { fixture.finish() }
        try await fixture.application.test(.router) { client in
            #expect(try await client.execute(uri: "/api/status", method: .get).status == .ok)
            let page = try await client.execute(uri: "/", method: .get)
            #expect(page.status == .ok)
            #expect(page.headers[.contentType]?.hasPrefix("text/html") == true)
            #expect(page.text.contains("/api/events"))
            let document = try await client.execute(uri: "/api/openapi.json", method: .get)
            #expect(document.json["openapi"] as? String == "3.1.0")
        }
    }

    @Test func aSecondClientGets409WithTheHolderUntilTheFirstIsQuietFor10Seconds() async throws {
        let fixture = try ServeFixture()
        defer { fixture.finish() }
        try await fixture.application.test(.router) { client in
            let first = try await client.execute(
                uri: "/api/goto", method: .post, headers: .client("phone-a"),
                body: jsonBody(#"{"pose": {"pan": 5}}"#))
            #expect(first.status == .accepted)
            let second = try await client.execute(
                uri: "/api/jog", method: .post, headers: .client("phone-b"),
                body: jsonBody(#"{"velocity": {"pan": -1}}"#))
            #expect(second.status == .conflict)
            #expect(second.json["holder"] as? String == "phone-a")
            // Watching is fine.
            let watched = try await client.execute(uri: "/api/status", method: .get, headers: .client("phone-b"))
            #expect(watched.status == .ok)
            #expect(watched.json["controller"] as? String == "phone-a")
            try await fixture.waitStatus { $0.state == .idle && $0.pose["pan"] == 5 }

            fixture.quietFor(seconds: 9)
            #expect(
                try await client.execute(
                    uri: "/api/goto", method: .post, headers: .client("phone-b"),
                    body: jsonBody(#"{"pose": {"pan": 0}}"#)
                ).status == .conflict)
            fixture.quietFor(seconds: 1.5)
            #expect(
                try await client.execute(
                    uri: "/api/goto", method: .post, headers: .client("phone-b"),
                    body: jsonBody(#"{"pose": {"pan": -5}}"#)
                ).status == .accepted)
            try await fixture.waitStatus { $0.state == .idle && $0.pose["pan"] == -5 }
        }
    }

    @Test func anInfeasibleOrMalformedProgramIs422AndNothingMoves() async throws {
        // 80°/s on an axis whose limit is 60°/s.
        let tooFast = #"{"rig": "r.json", "kind": "keyframes", "keyframes": {"pan": [{"t": 0, "value": 0}, {"t": 1, "value": 80}]}}"#
        let fixture = try ServeFixture(programs: ["fast.json": tooFast, "broken.json": #"{"rig": "r.json", "kind": "keyframes", "keyframes": [}"#])
        defer { fixture.finish() }
        try await fixture.application.test(.router) { client in
            let listed = try await client.execute(uri: "/api/programs", method: .get)
            let programs = try #require(listed.json["programs"] as? [[String: Any]])
            #expect(programs.map { $0["file"] as? String } == ["broken.json", "fast.json"])
            #expect(programs.allSatisfy { $0["feasible"] as? Bool == false })

            let fast = try await client.execute(
                uri: "/api/play", method: .post, headers: .client("a"),
                body: jsonBody(#"{"program": "fast.json"}"#))
            #expect(fast.status == .unprocessableContent)
            let message = try #require(fast.json["error"] as? String)
            #expect(message.contains("refusing to play") && message.contains("axis \"pan\"") && message.contains("exceeds max"), "\(message)")
            let broken = try await client.execute(
                uri: "/api/play", method: .post, headers: .client("a"),
                body: jsonBody(#"{"program": "broken.json"}"#))
            #expect(broken.status == .unprocessableContent)
            #expect((broken.json["error"] as? String)?.contains("broken.json:1:") == true)
            let missing = try await client.execute(
                uri: "/api/play", method: .post, headers: .client("a"),
                body: jsonBody(#"{"program": "../etc/passwd"}"#))
            #expect(missing.status == .badRequest)

            try await fixture.waitTicks(50)
            let status = fixture.console.status(controller: nil)
            #expect(status.state == .idle && status.program == nil && status.pose == ["pan": 0, "tilt": 0])
        }
    }

    @Test func aProgramPlaysItsStepsOnNextAndStopParks() async throws {
        let steps =
            #"{"rig": "r.json", "kind": "steps", "trigger": "keyboard", "steps": [{"pose": {"pan": 10}, "settleSeconds": 0}, {"pose": {"pan": 20}, "settleSeconds": 0}, {"pose": {"pan": 30}, "settleSeconds": 0}]}"#
        let fixture = try ServeFixture(programs: ["three.json": steps])
        defer { fixture.finish() }
        try await fixture.application.test(.router) { client in
            let play = try await client.execute(
                uri: "/api/play", method: .post, headers: .client("a"),
                body: jsonBody(#"{"program": "three.json", "fromStep": 2}"#))
            #expect(play.status == .accepted, "\(play.text)")
            let key = try #require(play.controlKey)
            try await fixture.waitStatus { $0.state == .waiting && $0.step == 2 }
            #expect(fixture.console.status(controller: nil).pose["pan"] == 20)
            // Something runs: a second play is refused.
            #expect(
                try await client.execute(
                    uri: "/api/play", method: .post, headers: .client("a"),
                    body: jsonBody(#"{"program": "three.json"}"#)
                ).status == .conflict)
            #expect(try await client.execute(uri: "/api/next", method: .post, headers: .client("a", key: key)).status == .accepted)
            try await fixture.waitStatus { $0.state == .waiting && $0.step == 3 && $0.pose["pan"] == 30 }
            #expect(try await client.execute(uri: "/api/back", method: .post, headers: .client("a", key: key)).status == .accepted)
            try await fixture.waitStatus { $0.state == .waiting && $0.step == 2 && $0.pose["pan"] == 20 }
            #expect(try await client.execute(uri: "/api/stop", method: .post, headers: .client("someone-else")).status == .accepted)
            let parked = try await fixture.waitStatus { $0.state == .idle && $0.program == nil }
            #expect(parked.pose == ["pan": 0, "tilt": 0])
        }
    }

    /// One jog, no refresh: the rig brakes after the 250 ms deadman (25 ticks at 100 Hz),
    /// so it ends exactly where a `CommandSource` given the same single jog ends.
    @Test func aJogWithoutRefreshesStopsAfterTheDeadman() async throws {
        let fixture = try ServeFixture()
        defer { fixture.finish() }
        // Posted like the server posts it: applied at the start of the next tick.
        let mailbox = SourceMailbox()
        var delivered = SourceMailbox.buffer()
        var reference = CommandSource(rig: fixture.rig, startPose: [0, 0])
        mailbox.post(.jog(velocityFractions: [1, 0]))
        var frame = [0.0, 0.0]
        for _ in 0..<1000 {
            _ = mailbox.deliver(to: &reference, buffer: &delivered)
            _ = reference.tick(into: &frame)
        }
        #expect(reference.deadmanStops == 1)
        let expectedPan = frame[0]
        #expect(expectedPan > 1)

        try await fixture.application.test(.router) { client in
            let jog = try await client.execute(
                uri: "/api/jog", method: .post, headers: .client("a"),
                body: jsonBody(#"{"velocity": {"pan": 1}}"#))
            #expect(jog.status == .accepted)
            try await fixture.waitStatus { $0.state == .jogging }
            let stopped = try await fixture.waitStatus { $0.state == .idle }
            // At rest: after a stall the loop's frames follow the source's a tick or two
            // late (it plays them slower, then catches up within the limits), so the
            // output may still take its last step when the source is idle.
            let rest = try await poll(every: .milliseconds(10), for: .seconds(30)) { () -> LoopStatus? in
                guard let status = fixture.console.loopStatus, status.velocities.allSatisfy({ abs($0) < 1e-6 }) else { return nil }
                return status
            }
            #expect(abs(rest.positions[0] - expectedPan) < 1e-9, "stopped at \(stopped.pose), a single jog stops at \(expectedPan)")
            #expect(fixture.console.status(controller: nil).state == .idle)
        }
    }

    @Test func badBodiesAreRefusedAsJSON() async throws {
        let fixture = try ServeFixture()
        defer { fixture.finish() }
        try await fixture.application.test(.router) { client in
            let big = String(repeating: " ", count: 70 * 1024) + "{}"
            let tooLarge = try await client.execute(uri: "/api/goto", method: .post, headers: .client("a"), body: jsonBody(big))
            #expect(tooLarge.status == .contentTooLarge)
            #expect(tooLarge.json["error"] != nil)
            let unknownAxis = try await client.execute(
                uri: "/api/goto", method: .post, headers: .client("a"),
                body: jsonBody(#"{"pose": {"roll": 3}}"#))
            #expect(unknownAxis.status == .badRequest)
            #expect((unknownAxis.json["error"] as? String)?.contains(#""pan", "tilt""#) == true)
            let outOfRange = try await client.execute(
                uri: "/api/jog", method: .post, headers: .client("a"),
                body: jsonBody(#"{"velocity": {"pan": 2}}"#))
            #expect(outOfRange.status == .badRequest)
            let notFound = try await client.execute(uri: "/api/nothing", method: .get)
            #expect(notFound.status == .notFound)
            #expect(notFound.json["error"] != nil)
        }
    }

    @Test func posesAreSavedAtomicallyAndGoneTo() async throws {
        let fixture = try ServeFixture()
        defer { fixture.finish() }
        try await fixture.application.test(.router) { client in
            let first = try await client.execute(
                uri: "/api/goto", method: .post, headers: .client("a"),
                body: jsonBody(#"{"pose": {"pan": 12, "tilt": 99}}"#))
            #expect(first.json["clamped"] as? [String] == ["tilt"])
            let key = try #require(first.controlKey)
            try await fixture.waitStatus { $0.state == .idle && $0.pose == ["pan": 12, "tilt": 45] }
            // Saving needs control: another client may not, the holder may.
            #expect(try await client.execute(uri: "/api/poses/sunset", method: .put, headers: .client("b")).status == .conflict)
            let saved = try await client.execute(uri: "/api/poses/sunset", method: .put, headers: .client("a", key: key))
            #expect(saved.status == .ok)
            #expect(try await client.execute(uri: "/api/poses/%20leading-space", method: .put, headers: .client("a")).status == .badRequest)
            let reread = try PoseBook(directory: fixture.directory.path)
            #expect(reread.pose(named: "sunset") == ["pan": 12, "tilt": 45])
            #expect(
                try await client.execute(
                    uri: "/api/goto", method: .post, headers: .client("a", key: key),
                    body: jsonBody(#"{"pose": {"pan": 0, "tilt": 0}}"#)
                ).status == .accepted)
            try await fixture.waitStatus { $0.state == .idle && $0.pose == ["pan": 0, "tilt": 0] }
            #expect(try await client.execute(uri: "/api/poses/sunset/goto", method: .post, headers: .client("a", key: key)).status == .accepted)
            try await fixture.waitStatus { $0.state == .idle && $0.pose == ["pan": 12, "tilt": 45] }
            #expect(try await client.execute(uri: "/api/poses/nowhere/goto", method: .post, headers: .client("a")).status == .notFound)
        }
    }

    /// Poses are deleted by name (404 for none), and at most `PoseBook.maxPoses` are kept:
    /// one more is refused (422) while replacing one by name still works.
    @Test func posesAreDeletedAndCapped() async throws {
        let fixture = try ServeFixture()
        defer { fixture.finish() }
        try await fixture.application.test(.router) { client in
            let first = try await client.execute(uri: "/api/poses/p0", method: .put, headers: .client("a"))
            #expect(first.status == .ok)
            let key = try #require(first.controlKey)
            for i in 1..<PoseBook.maxPoses {
                #expect(try await client.execute(uri: "/api/poses/p\(i)", method: .put, headers: .client("a", key: key)).status == .ok)
            }
            let over = try await client.execute(uri: "/api/poses/one-more", method: .put, headers: .client("a", key: key))
            #expect(over.status == .unprocessableContent)
            #expect((over.json["error"] as? String)?.contains("at most \(PoseBook.maxPoses) poses") == true)
            #expect(try await client.execute(uri: "/api/poses/p7", method: .put, headers: .client("a", key: key)).status == .ok)
            // A watcher without control deletes nothing.
            #expect(try await client.execute(uri: "/api/poses/p7", method: .delete, headers: .client("b")).status == .conflict)
            let deleted = try await client.execute(uri: "/api/poses/p7", method: .delete, headers: .client("a", key: key))
            #expect(deleted.status == .ok && deleted.json["deleted"] as? String == "p7")
            #expect(try await client.execute(uri: "/api/poses/p7", method: .delete, headers: .client("a", key: key)).status == .notFound)
            #expect(try await client.execute(uri: "/api/poses/one-more", method: .put, headers: .client("a", key: key)).status == .ok)
            let reread = try PoseBook(directory: fixture.directory.path)
            #expect(reread.all.count == PoseBook.maxPoses && reread.pose(named: "p7") == nil && reread.pose(named: "one-more") != nil)
        }
    }

    /// Names as people write them: spaces and accented letters, sent %-escaped in the URL
    /// and kept decoded; a leading space or dot, a slash or a control character refused.
    @Test func poseNamesMayHaveSpacesAndAccents() async throws {
        let fixture = try ServeFixture()
        defer { fixture.finish() }
        try await fixture.application.test(.router) { client in
            let saved = try await client.execute(uri: "/api/poses/Ch%C3%AAne%20ouest", method: .put, headers: .client("a"))
            #expect(saved.status == .ok, "\(saved.text)")
            let key = try #require(saved.controlKey)
            #expect(saved.json["name"] as? String == "Chêne ouest")
            #expect(try PoseBook(directory: fixture.directory.path).pose(named: "Chêne ouest") != nil)
            #expect(try await client.execute(uri: "/api/poses/Ch%C3%AAne%20ouest/goto", method: .post, headers: .client("a", key: key)).status == .accepted)
            for bad in ["%20lead", ".hidden", "a%2Fb", "tab%09", "%E2%9C%93"] {
                let refused = try await client.execute(uri: "/api/poses/\(bad)", method: .put, headers: .client("a"))
                #expect(refused.status == .badRequest, "\(bad): \(refused.status)")
            }
        }
    }
}
