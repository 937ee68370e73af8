import Foundation
import Hummingbird
import HummingbirdTesting
import RigCore
import RigFormat
import RigRuntime
import RigTestSupport
import Testing

@testable import RigServe

/// A program with a `"start"` played from `rig serve` waits for it as `rig play` does
/// (`StartClock`): nothing moves until then, the status says what it waits for and when,
/// STOP cancels it, and a start already past is refused unless started now.
@Suite(.serialized) struct ServeStartTests {
    static func steps(start: String) -> String {
        #"{"rig": "r.json", "kind": "steps", "trigger": "keyboard", "start": \#(start), "site": {"latitude": 45.07, "longitude": 7.69}, "steps": [{"pose": {"pan": 10}, "settleSeconds": 0}, {"pose": {"pan": 20}, "settleSeconds": 0}]}"#
    }

    @Test func aProgramWaitsForItsStartThenPlays() async throws {
        let fixture = try ServeFixture()
        defer { fixture.finish() }
        try await fixture.application.test(.router) { client in
            // Written just before it is played: a start 15 s ahead, whatever else the machine does.
            let start = (Date().timeIntervalSince1970 + 15).rounded(.up)
            try Self.steps(start: "\"\(UTCTime.isoSeconds(start))\"").write(
                to: fixture.directory.appendingPathComponent("programs/soon.json"), atomically: true, encoding: .utf8)
            let play = try await client.execute(
                uri: "/api/play", method: .post, headers: .client("a"), body: jsonBody(#"{"program": "soon.json"}"#))
            #expect(play.status == .accepted, "\(play.text)")
            let key = try #require(play.controlKey)
            let body = play.json
            #expect(body["state"] as? String == "scheduled", "\(play.text)")
            let said = try #require(body["start"] as? [String: Any])
            #expect(said["at"] as? String == UTCTime.isoSeconds(start))
            #expect(said["event"] is NSNull)
            #expect((said["inSeconds"] as? Double).map { $0 > 0 && $0 <= 16 } == true, "\(said)")
            #expect((said["text"] as? String)?.contains(UTCTime.text(start, dateToo: true)) == true, "\(said)")
            // Waiting: nothing else is taken, the loop runs and nothing moves.
            #expect(
                try await client.execute(uri: "/api/play", method: .post, headers: .client("a", key: key), body: jsonBody(#"{"program": "soon.json"}"#))
                    .status == .conflict)
            #expect(try await client.execute(uri: "/api/next", method: .post, headers: .client("a", key: key)).status == .conflict)
            #expect(
                try await client.execute(uri: "/api/jog", method: .post, headers: .client("a", key: key), body: jsonBody(#"{"velocity": {"pan": 1}}"#))
                    .status == .conflict)
            try await fixture.waitTicks(50)
            let waiting = fixture.console.status(controller: nil)
            // (Unless a machine this busy took the 15 s to get here.)
            if Date().timeIntervalSince1970 < start - 1 {
                #expect(waiting.state == .scheduled && waiting.program == "soon.json" && waiting.pose == ["pan": 0, "tilt": 0])
            }
            // At its start it plays: the first step, reached no sooner.
            let first = try await fixture.waitStatus(for: .seconds(60)) { $0.state == .waiting && $0.step == 1 }
            #expect(Date().timeIntervalSince1970 >= start)
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
        let past = Date().timeIntervalSince1970 - 300
        let fixture = try ServeFixture(programs: ["late.json": Self.steps(start: "\"\(UTCTime.isoSeconds(past))\"")])
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
