import Foundation
import Hummingbird
import HummingbirdTesting
import RigCore
import RigFormat
import RigTestSupport
import Testing

@testable import RigServe

/// `POST /api/programs/check` and `POST /api/programs`: the page's builder, through the
/// router, on the simulated rig.
@Suite(.serialized) struct ServeProgramSaveTests {
    static let pano = #"{"kind": "panorama", "trigger": "auto", "panorama": {"lens": "fullframe-24mm", "pan": [-40, 40], "tilt": [-10, 20]}}"#

    @Test func aCheckSaysWhatThePanoramaWouldBeAndSavesNothing() async throws {
        let fixture = try ServeFixture()
        defer { fixture.finish() }
        try await fixture.application.test(.router) { client in
            let reply = try await client.execute(
                uri: "/api/programs/check", method: .post, headers: .client("a"), body: jsonBody(#"{"program": \#(Self.pano)}"#))
            #expect(reply.status == .ok, "\(reply.text)")
            let panorama = try #require(reply.json["panorama"] as? [String: Any])
            let expected = try #require(try Self.plan(Self.pano))
            #expect(panorama["rows"] as? Int == expected.rows)
            #expect(panorama["shotsPerRow"] as? [Int] == expected.shotsPerRow)
            #expect(reply.json["steps"] as? Int == expected.shots.count)
            #expect(reply.json["feasible"] as? Bool == true)
            #expect(reply.json["saved"] as? Bool == false)
            #expect(try FileManager.default.contentsOfDirectory(atPath: fixture.directory.appendingPathComponent("programs").path).isEmpty)
            // A check takes no control.
            #expect(fixture.parts.lease.current(nowSeconds: 0) == nil)
        }
    }

    /// The expected plan: the program parsed with the served rig.
    static func plan(_ program: String) throws -> PanoramaPlan? {
        let text = #"{"rig": "rig.json", "# + program.dropFirst()
        return try ProgramParser.parse(text: text, file: "p.json") { _, _ in (ServeFixture.rigText, "rig.json") }.panorama
    }

    @Test func aSavedProgramIsTheFileRigCheckReadsAndIsNeverOverwrittenUnasked() async throws {
        let fixture = try ServeFixture()
        defer { fixture.finish() }
        let path = fixture.directory.appendingPathComponent("programs/pano.json").path
        try await fixture.application.test(.router) { client in
            let saved = try await client.execute(
                uri: "/api/programs", method: .post, headers: .client("a"), body: jsonBody(#"{"name": "pano.json", "program": \#(Self.pano)}"#))
            #expect(saved.status == .created, "\(saved.text)")
            #expect(saved.json["saved"] as? Bool == true)
            let text = try String(contentsOfFile: path, encoding: .utf8)
            // The served rig is named (by its full path: it is not in the programs folder),
            // the rest as sent, in the project's layout.
            let rig = URL(fileURLWithPath: "test-rig.json").standardizedFileURL.path
            #expect(text.hasPrefix("{\n  \"rig\": \(JSONText.string(rig)),\n  \"kind\": \"panorama\","), "\(text)")
            #expect(JSONText.document(try JSONParser.parse(text)) == text)
            // The library lists it, feasible.
            let list = try await client.execute(uri: "/api/programs", method: .get)
            let programs = try #require(list.json["programs"] as? [[String: Any]])
            #expect(programs.contains { $0["file"] as? String == "pano.json" && $0["feasible"] as? Bool == true })

            // Again without overwrite: refused, the file unchanged.
            let key = try #require(saved.headers[ServeRoutes.controlHeader])
            let other = #"{"name": "pano.json", "program": {"kind": "steps", "steps": [{"pose": {"pan": 5}}]}}"#
            let again = try await client.execute(uri: "/api/programs", method: .post, headers: .client("a", key: key), body: jsonBody(other))
            #expect(again.status == .conflict)
            #expect((again.json["error"] as? String)?.contains("overwrite") == true)
            #expect(try String(contentsOfFile: path, encoding: .utf8) == text)
            // With it: replaced.
            let replace = #"{"name": "pano.json", "overwrite": true, "program": {"kind": "steps", "steps": [{"pose": {"pan": 5}}]}}"#
            #expect(try await client.execute(uri: "/api/programs", method: .post, headers: .client("a", key: key), body: jsonBody(replace)).status == .created)
            #expect(try String(contentsOfFile: path, encoding: .utf8).contains("\"kind\": \"steps\""))
        }
    }

    @Test func badDraftsAreRefusedWithTheLineAndWriteNothing() async throws {
        let fixture = try ServeFixture()
        defer { fixture.finish() }
        let folder = fixture.directory.appendingPathComponent("programs").path
        try await fixture.application.test(.router) { client in
            func post(_ body: String) async throws -> (HTTPResponse.Status, String) {
                let r = try await client.execute(uri: "/api/programs", method: .post, headers: .client("a"), body: jsonBody(body))
                return (r.status, r.json["error"] as? String ?? "")
            }
            for name in ["../evil.json", "sub/x.json", #"a\\b.json"#, ".hidden.json", "x.txt", ".json"] {
                let (status, message) = try await post(#"{"name": \#(JSONText.string(name)), "program": \#(Self.pano)}"#)
                #expect(status == .badRequest, "\(name)")
                #expect(message.contains("$.name"), "\(name): \(message)")
            }
            // A malformed program: the saved file's line and column, the JSON path, what is valid.
            let (status, message) = try await post(
                #"{"name": "p.json", "program": {"kind": "panorama", "panorama": {"lens": "fullframe-24mm", "columns": 2, "pan": [-80, 80], "tilt": [0, 0]}}}"#)
            #expect(status == .unprocessableContent)
            #expect(message.hasPrefix("p.json:6:16: error: $.panorama.columns: 2 columns over pan -80…80° overlap"), "\(message)")
            #expect(message.contains("valid: at least 4 columns"), "\(message)")
            // An infeasible one (a pose past the soft limits) is not saved either.
            let (far, farMessage) = try await post(#"{"name": "far.json", "program": {"kind": "steps", "steps": [{"pose": {"pan": 89}}]}}"#)
            #expect(far == .unprocessableContent, "\(farMessage)")
            let (notObject, _) = try await post(#"{"name": "n.json", "program": [1]}"#)
            #expect(notObject == .badRequest)
            let (unknown, unknownMessage) = try await post(#"{"name": "n.json", "program": {}, "zzz": 1}"#)
            #expect(unknown == .badRequest && unknownMessage.contains("zzz"))
            #expect(try FileManager.default.contentsOfDirectory(atPath: folder).isEmpty)
            // Nothing moved.
            #expect(fixture.console.status(controller: nil).pose == ["pan": 0, "tilt": 0])
        }
    }

    @Test func onlyTheControllerSaves() async throws {
        let fixture = try ServeFixture()
        defer { fixture.finish() }
        try await fixture.application.test(.router) { client in
            // Client a takes control by moving.
            let move = try await client.execute(uri: "/api/goto", method: .post, headers: .client("a"), body: jsonBody(#"{"pose": {"pan": 5}}"#))
            #expect(move.status == .accepted)
            let refused = try await client.execute(
                uri: "/api/programs", method: .post, headers: .client("b"), body: jsonBody(#"{"name": "b.json", "program": \#(Self.pano)}"#))
            #expect(refused.status == .conflict)
            #expect(!FileManager.default.fileExists(atPath: fixture.directory.appendingPathComponent("programs/b.json").path))
            // And from another origin, nothing at all.
            var foreign = HTTPFields.client("a")
            foreign[.origin] = "http://evil.example"
            let cross = try await client.execute(
                uri: "/api/programs", method: .post, headers: foreign, body: jsonBody(#"{"name": "c.json", "program": \#(Self.pano)}"#))
            #expect(cross.status == .forbidden)
        }
    }
}
