import Foundation
import Hummingbird
import HummingbirdTesting
import RigCore
import RigFormat
import RigRuntime
import RigTestSupport
import Synchronization
import Testing

@testable import RigServe

/// A program with a `"start"` played from `rig serve` waits for it as `rig play` does
/// (`StartClock`): nothing moves until then, the status says what it waits for and when,
/// STOP cancels it, and a start already past is refused unless started now.
@Suite(.serialized) struct ServeStartTests {
    static func steps(start: String) -> String {
        #"{"rig": "r.json", "kind": "steps", "trigger": "keyboard", "start": \#(start), "site": {"latitude": 45.07, "longitude": 7.69}, "steps": [{"pose": {"pan": 10}, "settleSeconds": 0}, {"pose": {"pan": 20}, "settleSeconds": 0}]}"#
    }

    /// The server's wall clock in a test: moved on by hand (the wait reads it each second).
    final class WallClock: Sendable {
        private let now = Mutex(Date().timeIntervalSince1970.rounded())
        var seconds: Double { now.withLock { $0 } }
        func advance(_ seconds: Double) { now.withLock { $0 += seconds } }
    }

    @Test func aProgramWaitsForItsStartThenPlays() async throws {
        let clock = WallClock()
        // An hour ahead on the server's clock, which the test moves on.
        let start = clock.seconds + 3600
        let fixture = try ServeFixture(
            programs: ["soon.json": Self.steps(start: "\"\(UTCTime.isoSeconds(start))\"")], wallClock: { clock.seconds })
        defer { fixture.finish() }
        try await fixture.application.test(.router) { client in
            let play = try await client.execute(
                uri: "/api/play", method: .post, headers: .client("a"), body: jsonBody(#"{"program": "soon.json"}"#))
            #expect(play.status == .accepted, "\(play.text)")
            let key = try #require(play.controlKey)
            let body = play.json
            #expect(body["state"] as? String == "scheduled", "\(play.text)")
            let said = try #require(body["start"] as? [String: Any])
            #expect(said["at"] as? String == UTCTime.isoSeconds(start))
            #expect(said["event"] is NSNull)
            #expect(said["inSeconds"] as? Double == 3600, "\(said)")
            #expect((said["text"] as? String)?.contains(UTCTime.text(start, dateToo: true)) == true, "\(said)")
            // Waiting: nothing else is taken, the loop runs and nothing moves.
            #expect(
                try await client.execute(uri: "/api/play", method: .post, headers: .client("a", key: key), body: jsonBody(#"{"program": "soon.json"}"#))
                    .status == .conflict)
            #expect(try await client.execute(uri: "/api/next", method: .post, headers: .client("a", key: key)).status == .conflict)
            #expect(
                try await client.execute(uri: "/api/jog", method: .post, headers: .client("a", key: key), body: jsonBody(#"{"velocity": {"pan": 1}}"#))
                    .status == .conflict)
            clock.advance(1800)
            try await fixture.waitTicks(100)
            let waiting = fixture.console.status(controller: nil)
            #expect(waiting.state == .scheduled && waiting.program == "soon.json" && waiting.pose == ["pan": 0, "tilt": 0], "\(waiting)")
            #expect(waiting.start?.inSeconds == 1800)
            // A second before its start it still waits; at its start it plays the first step.
            clock.advance(1799)
            try await fixture.waitTicks(150)
            #expect(fixture.console.status(controller: nil).state == .scheduled)
            clock.advance(1)
            let first = try await fixture.waitStatus(for: .seconds(60)) { $0.state == .waiting && $0.step == 1 }
            #expect(first.pose["pan"] == 10 && first.start == nil)
            #expect(try await client.execute(uri: "/api/stop", method: .post, headers: .client("a")).status == .accepted)
            try await fixture.waitStatus { $0.state == .idle && $0.program == nil }
        }
    }

    @Test func stopCancelsTheWaitAndNothingMoves() async throws {
        // The next sunset at Turin: hours away at most a day.
        let fixture = try ServeFixture(programs: ["sunset.json": Self.steps(start: #"{"sun": "sunset", "offsetMinutes": -30}"#)])
        defer { fixture.finish() }
        try await fixture.application.test(.router) { client in
            let play = try await client.execute(
                uri: "/api/play", method: .post, headers: .client("a"), body: jsonBody(#"{"program": "sunset.json"}"#))
            #expect(play.status == .accepted, "\(play.text)")
            let status = try await fixture.waitStatus { $0.state == .scheduled }
            let start = try #require(status.start)
            #expect(start.event?.contains("sunset") == true, "\(start)")
            #expect(start.inSeconds > 0 && start.inSeconds <= 86_400 + 3600)
            // Anyone may stop: the wait ends, nothing was posted to the loop.
            #expect(try await client.execute(uri: "/api/stop", method: .post, headers: .client("b")).status == .accepted)
            let stopped = fixture.console.status(controller: nil)
            #expect(stopped.state == .idle && stopped.program == nil && stopped.start == nil, "\(stopped)")
            #expect(stopped.lastStop == ServeStatus.LastStop(by: "b", program: "sunset.json", step: nil))
            try await fixture.waitTicks(150)
            #expect(fixture.console.status(controller: nil).pose == ["pan": 0, "tilt": 0])
            // The rig is free again: another program plays at once.
            let now = try await client.execute(
                uri: "/api/play", method: .post, headers: .client("a"), body: jsonBody(#"{"program": "sunset.json", "startNow": true}"#))
            #expect(now.status == .accepted, "\(now.text)")
            try await fixture.waitStatus { $0.state == .waiting && $0.step == 1 && $0.pose["pan"] == 10 }
        }
    }

    @Test func aStartAlreadyPastIsRefusedUnlessStartedNow() async throws {
        let clock = WallClock()
        let past = clock.seconds - 300
        let fixture = try ServeFixture(
            programs: ["late.json": Self.steps(start: "\"\(UTCTime.isoSeconds(past))\"")], wallClock: { clock.seconds })
        defer { fixture.finish() }
        try await fixture.application.test(.router) { client in
            let refused = try await client.execute(
                uri: "/api/play", method: .post, headers: .client("a"), body: jsonBody(#"{"program": "late.json"}"#))
            #expect(refused.status == .unprocessableContent)
            #expect(refused.text.contains("late.json: the program starts at "), "\(refused.text)")
            #expect(refused.text.contains(" ago: refusing to play (nothing moved)"), "\(refused.text)")
            #expect(fixture.console.status(controller: nil).state == .idle)
            let now = try await client.execute(
                uri: "/api/play", method: .post, headers: .client("a"), body: jsonBody(#"{"program": "late.json", "startNow": true}"#))
            #expect(now.status == .accepted, "\(now.text)")
            try await fixture.waitStatus { $0.state == .waiting && $0.step == 1 }
        }
    }
}
