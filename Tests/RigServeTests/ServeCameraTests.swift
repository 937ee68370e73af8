import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import RigCore
import RigRuntime
import RigTestSupport
import Testing

@testable import RigServe

/// `rig serve` fires the rig's camera at every step, as `rig play` does: the shots are
/// logged, a ramp follows the measures, and the status (and the page) shows the last one.
@Suite struct ServeCameraTests {
    static let rig = """
        {"name": "head with a camera", "loopRateHz": 100, "output": {"type": "sim"},
         "axes": [{"name": "pan", "channel": 0, "softLimits": [-85, 85], "maxVelocity": 60, "maxAcceleration": 120}],
         "camera": {"type": "sim", "scene": [{"t": 0, "ev": 12}, {"t": 600, "ev": 12}], "focusMs": 0, "shutterMs": 20, "afterShotMs": 0}}
        """
    static let program = """
        {"rig": "test-rig.json", "kind": "timelapse", "trigger": "interval:1", "settleSeconds": 0.05,
         "shoot": {"bulb": true, "ramp": {"mode": "auto", "startEV": 12, "maxShutterSeconds": 0.2}},
         "timelapse": {"frames": 6, "keyframes": {"pan": [{"frame": 0, "value": 0}, {"frame": 5, "value": 5}]}}}
        """

    /// The same timelapse, 600 frames: long enough (10 minutes) that it still plays however
    /// late a loaded machine lets a test go on; the test stops it.
    static let longProgram = program.replacingOccurrences(of: #""frames": 6"#, with: #""frames": 600"#).replacingOccurrences(
        of: #"{"frame": 5, "value": 5}"#, with: #"{"frame": 599, "value": 5}"#)

    @Test func servedProgramsShootAndTheStatusShowsTheLastFrame() async throws {
        let rig = try RigParser.parse(text: Self.rig, file: "test-rig.json")
        let camera = SimCamera(scene: try rig.camera.flatMap { try SimCamera.checkConfig($0) })
        let fixture = try ServeFixture(programs: ["dusk.json": Self.program], rigText: Self.rig, camera: camera)
        defer { fixture.finish() }
        try await fixture.application.test(.router) { client in
            let play = try await client.execute(uri: "/api/play", method: .post, headers: .client("a"), body: jsonBody(#"{"program": "dusk.json"}"#))
            #expect(play.status == .accepted)
            let done = try await fixture.waitStatus { $0.lastShot?.step == 6 && $0.state == .idle }
            let last = try #require(done.lastShot)
            #expect(last.program == "dusk.json")
            #expect(last.settings["exposureSeconds"] != nil && last.settings["iso"] == "100")
            let brightness = try #require(last.brightnessEV)
            #expect(abs(brightness) < 0.5)
            #expect(camera.shotCount == 6)
            // The simulated camera keeps no preview.
            #expect(try await client.execute(uri: "/api/last-shot/preview", method: .get, headers: .client("a")).status == .notFound)
            let status = try await client.execute(uri: "/api/status", method: .get, headers: .client("a"))
            #expect(String(buffer: status.body).contains(#""lastShot":{"#))
        }
        // The run is logged as `rig play` logs it: six shots and their measures.
        let runs = fixture.directory.appendingPathComponent("runs")
        let logs = try FileManager.default.contentsOfDirectory(atPath: runs.path).filter { $0.hasSuffix(".jsonl") }
        #expect(logs.count == 1)
        let text = try String(contentsOf: runs.appendingPathComponent(logs.first ?? ""), encoding: .utf8)
        let log = try ShotLog(text: text, file: "run.jsonl")
        #expect(log.shots.map(\.step) == [1, 2, 3, 4, 5, 6])
        #expect(text.components(separatedBy: #""event":"image""#).count - 1 == 6)
        #expect(log.lastRunEnd?.reason == .done)
    }
}

extension ServeCameraTests {
    /// `POST /api/testshot`: the program's first frame (the ramp's first exposure) taken at
    /// rest and shown as the last shot, in no log; refused while a program plays.
    @Test func aTestShotIsTheProgramsFirstFrameAtRest() async throws {
        let rig = try RigParser.parse(text: Self.rig, file: "test-rig.json")
        let camera = SimCamera(scene: try rig.camera.flatMap { try SimCamera.checkConfig($0) })
        let fixture = try ServeFixture(programs: ["dusk.json": Self.program, "long.json": Self.longProgram], rigText: Self.rig, camera: camera)
        defer { fixture.finish() }
        try await fixture.application.test(.router) { client in
            let test = try await client.execute(uri: "/api/testshot", method: .post, headers: .client("a"), body: jsonBody(#"{"program": "dusk.json"}"#))
            #expect(test.status == .ok, "\(String(buffer: test.body))")
            #expect(test.json["test"] as? Bool == true)
            #expect(test.json["program"] as? String == "test shot (dusk.json)")
            // The ramp's first frame is its startEV, the scene's EV: measured near mid-grey.
            #expect(abs(test.json["brightnessEV"] as? Double ?? 99) < 0.5, "\(test.json)")
            #expect(camera.shotCount == 1)
            let status = try await fixture.waitStatus { $0.lastShot?.test == true }
            #expect(status.state == .idle)
            let play = try await client.execute(
                uri: "/api/play", method: .post, headers: .client("a", key: test.controlKey), body: jsonBody(#"{"program": "long.json"}"#))
            #expect(play.status == .accepted)
            let during = try await client.execute(
                uri: "/api/testshot", method: .post, headers: .client("a", key: test.controlKey), body: jsonBody(#"{"program": "dusk.json"}"#))
            #expect(during.status == .conflict)
            let preflight = try await client.execute(uri: "/api/preflight?program=dusk.json", method: .get, headers: .client("a"))
            #expect(preflight.status == .conflict)
            _ = try await client.execute(uri: "/api/stop", method: .post, headers: .client("a"))
        }
        let runs = fixture.directory.appendingPathComponent("runs")
        let logs = try FileManager.default.contentsOfDirectory(atPath: runs.path).filter { $0.hasSuffix(".jsonl") }
        // Only the run's own log: the test shot is in none.
        #expect(logs.count == 1)
        let text = try String(contentsOf: runs.appendingPathComponent(logs.first ?? ""), encoding: .utf8)
        #expect(!text.contains("test shot"))
    }
}

extension ServeCameraTests {
    /// `POST /api/nudge` sets or moves the playing ramp's nudge (held to ±3 EV), takes
    /// control, and is refused with no ramp playing or a body that is not one number.
    @Test func theNudgeReachesThePlayingRamp() async throws {
        let rig = try RigParser.parse(text: Self.rig, file: "test-rig.json")
        let camera = SimCamera(scene: try rig.camera.flatMap { try SimCamera.checkConfig($0) })
        let fixture = try ServeFixture(programs: ["dusk.json": Self.longProgram], rigText: Self.rig, camera: camera)
        defer { fixture.finish() }
        try await fixture.application.test(.router) { client in
            let idle = try await client.execute(uri: "/api/nudge", method: .post, headers: .client("a"), body: jsonBody(#"{"by": 0.33}"#))
            #expect(idle.status == .conflict)
            #expect(String(buffer: idle.body).contains("no program with an exposure ramp is playing"))
            let play = try await client.execute(uri: "/api/play", method: .post, headers: .client("a"), body: jsonBody(#"{"program": "dusk.json"}"#))
            #expect(play.status == .accepted)
            let key = try #require(play.controlKey)
            _ = try await fixture.waitStatus { $0.lastShot?.step ?? 0 >= 1 }
            let up = try await client.execute(uri: "/api/nudge", method: .post, headers: .client("a", key: key), body: jsonBody(#"{"by": 0.333}"#))
            #expect(up.status == .ok)
            #expect(up.json["nudgeEV"] as? Double == 0.333)
            #expect(
                try await client.execute(uri: "/api/nudge", method: .post, headers: .client("a", key: key), body: jsonBody(#"{"by": 5}"#)).json["nudgeEV"]
                    as? Double == 3)
            #expect(abs(fixture.console.rampNudge.ev - 3) < 1e-9)
            // The status carries it (the page's nudge row shows it); an idle status does not.
            #expect(fixture.console.status(controller: nil).nudgeEV == 3)
            let both = try await client.execute(uri: "/api/nudge", method: .post, headers: .client("a", key: key), body: jsonBody(#"{"ev": 1, "by": 1}"#))
            #expect(both.status == .badRequest)
            // Another client watches; it cannot nudge.
            let other = try await client.execute(uri: "/api/nudge", method: .post, headers: .client("b"), body: jsonBody(#"{"ev": 0}"#))
            #expect(other.status == .conflict)
            _ = try await client.execute(uri: "/api/stop", method: .post, headers: .client("a", key: key))
            _ = try await fixture.waitStatus { $0.state == .idle }
            #expect(fixture.console.status(controller: nil).nudgeEV == nil)
        }
    }
}

/// `rig serve` with a gphoto2 camera (libgphoto2's virtual camera): the phone's last shot
/// has the camera's file, its settings, measure, histogram and preview.
@Suite(.enabled(if: VirtualCamera.available, Comment(rawValue: VirtualCamera.missing)))
struct ServeGPhoto2Tests {
    @Test func theLastShotCarriesTheCamerasFileAndPreview() async throws {
        let pictures = try VirtualCamera.pictures()
        let download = pictures.deletingLastPathComponent().appendingPathComponent("dl").path
        let rig = """
            {"name": "gp", "loopRateHz": 50, "output": {"type": "sim"}, "axes": [{"name": "pan", "channel": 0}],
             "camera": {"type": "gphoto2", "afterShotMs": 0, "download": "\(download)"}}
            """
        let program = #"{"rig": "rig.json", "kind": "steps", "trigger": "auto", "settleSeconds": 0.05, "steps": [{"pose": {"pan": 5}}, {"pose": {"pan": 10}}]}"#
        // 200 frames: more than the virtual camera's card says it holds (150).
        let long = #"""
            {"rig": "rig.json", "kind": "timelapse", "trigger": "interval:2", "settleSeconds": 0.05,
             "timelapse": {"frames": 200, "keyframes": {"pan": [{"frame": 0, "value": 0}, {"frame": 199, "value": 5}]}}}
            """#
        let server = try await ServeProcess(
            rig: rig, programs: ["two.json": program, "long.json": long], environment: VirtualCamera.environment(pictures: pictures))
        defer { server.stop() }

        // Before the run: the card (libgphoto2's storage information), the battery and the
        // download folder's disk, against the frames.
        let (checked, preflight) = try await server.request("GET", "/api/preflight?program=two.json")
        #expect(checked == 200, "\(preflight)")
        #expect(preflight["frames"] as? Int == 2)
        #expect(preflight["battery"] as? String == "50%")
        let cards = try #require(preflight["storage"] as? [[String: Any]], "\(preflight)")
        #expect(cards.first?["freeImages"] as? Int == 150, "\(cards)")
        let findings = (preflight["findings"] as? [[String: Any]]) ?? []
        func finding(_ topic: String, in list: [[String: Any]]) -> (level: String, text: String)? {
            list.first { $0["topic"] as? String == topic }.map { ($0["level"] as? String ?? "", $0["text"] as? String ?? "") }
        }
        #expect(finding("card", in: findings)?.level == "ok", "\(findings)")
        #expect(finding("card", in: findings)?.text.contains("about 150 more frames; this shoot takes 2") == true, "\(findings)")
        #expect(finding("disk", in: findings)?.text.hasPrefix(download + " has ") == true, "\(findings)")
        #expect(finding("battery", in: findings)?.level == "ok", "\(findings)")
        let (_, short) = try await server.request("GET", "/api/preflight?program=long.json")
        let shortFindings = (short["findings"] as? [[String: Any]]) ?? []
        #expect(finding("card", in: shortFindings)?.level == "warning", "\(short)")
        #expect(finding("card", in: shortFindings)?.text.contains("holds about 150 more frames; this shoot takes 200") == true, "\(short)")
        #expect((short["seconds"] as? Double ?? 0) >= 398, "\(short)")
        #expect(finding("time", in: shortFindings)?.text.hasPrefix("takes about 6 min") == true, "\(short)")
        #expect(try await server.request("GET", "/api/preflight?program=none.json").status == 404)

        // A test shot: one frame, shown as the last shot, in no log.
        let (shot, test) = try await server.request("POST", "/api/testshot", body: #"{"program": "two.json"}"#)
        #expect(shot == 200, "\(test)")
        #expect(test["test"] as? Bool == true)
        #expect(test["program"] as? String == "test shot (two.json)")
        #expect((test["file"] as? String)?.hasPrefix("/store_00010001/DCIM/") == true, "\(test)")
        #expect(test["preview"] as? Bool == true, "the test shot's measure came with it: \(test)")
        #expect(abs(test["brightnessEV"] as? Double ?? 99) < 0.05, "\(test)")
        let runs = server.directory.appendingPathComponent("state/rig/runs")
        #expect(((try? FileManager.default.contentsOfDirectory(atPath: runs.path)) ?? []).filter { $0.hasSuffix(".jsonl") }.isEmpty)

        let (status, _) = try await server.request("POST", "/api/play", body: #"{"program": "two.json"}"#)
        #expect(status == 202)
        try await server.waitStatus(for: .seconds(60)) { json in
            ((json["lastShot"] as? [String: Any])?["step"] as? Int) == 2 && ((json["lastShot"] as? [String: Any])?["preview"] as? Bool) == true
        }
        let (_, json) = try await server.request("GET", "/api/status")
        let last = try #require(json["lastShot"] as? [String: Any])
        #expect((last["file"] as? String)?.hasPrefix("/store_00010001/DCIM/") == true)
        #expect((last["histogram"] as? [Int])?.count == 16)
        #expect(abs(last["brightnessEV"] as? Double ?? 99) < 0.05)
        #expect(last["battery"] as? String == "50%")
        let preview = try await server.fetch("/api/last-shot/preview")
        #expect(preview.status == 200 && preview.type == "image/jpeg")
        #expect(preview.body.prefix(2) == Data([0xFF, 0xD8]), "a JPEG")
    }

    /// A served program's exposure and bracket reach the camera as in `rig play`: each frame
    /// at its own shutter speed, the aperture asked for; a value the camera does not offer
    /// is refused (422) naming its choices, and nothing moves.
    @Test func theProgramsExposureAndBracketAreTheCamerasFrames() async throws {
        let pictures = try VirtualCamera.pictures()
        let rig = """
            {"name": "gp", "loopRateHz": 50, "output": {"type": "sim"}, "axes": [{"name": "pan", "channel": 0}],
             "camera": {"type": "gphoto2", "afterShotMs": 0}}
            """
        let bracketed =
            #"{"rig": "rig.json", "kind": "steps", "trigger": "auto", "settleSeconds": 0.05, "shoot": {"exposure": {"aperture": "f/8"}, "bracket": {"count": 3, "stepEV": 1}}, "steps": [{"pose": {"pan": 5}}, {"pose": {"pan": 10}}]}"#
        let wrong = #"{"rig": "rig.json", "kind": "steps", "trigger": "auto", "shoot": {"exposure": {"aperture": "f/99"}}, "steps": [{"pose": {"pan": 5}}]}"#
        let server = try await ServeProcess(
            rig: rig, programs: ["bracketed.json": bracketed, "wrong.json": wrong], environment: VirtualCamera.environment(pictures: pictures))
        defer { server.stop() }
        let (refused, body) = try await server.request("POST", "/api/play", body: #"{"program": "wrong.json"}"#)
        #expect(refused == 422, "\(body)")
        #expect((body["error"] as? String)?.contains("not one of the camera's choices") == true, "\(body)")
        let (status, played) = try await server.request("POST", "/api/play", body: #"{"program": "bracketed.json"}"#)
        #expect(status == 202, "\(played)")
        try await server.waitStatus(for: .seconds(60)) { json in
            ((json["lastShot"] as? [String: Any])?["step"] as? Int) == 2 && (json["state"] as? String) == "idle"
        }
        // The run's log: six frames, each at the bracket's shutter speed, all at f/8.
        let runs = server.directory.appendingPathComponent("state/rig/runs")
        let logs = try FileManager.default.contentsOfDirectory(atPath: runs.path).filter { $0.hasSuffix(".jsonl") }
        #expect(logs.count == 1, "\(logs)")
        let text = try String(contentsOf: runs.appendingPathComponent(logs.first ?? ""), encoding: .utf8)
        let shots = try ShotLog(text: text, file: "run.jsonl").shots
        let speeds = shots.map { shot in shot.settings.first { $0.name == "shutterspeed" }?.value ?? "?" }
        #expect(speeds == ["0.0100s", "0.0050s", "0.0200s", "0.0100s", "0.0050s", "0.0200s"], "\(text)")
        #expect(shots.allSatisfy { $0.settings.contains(CameraSetting("f-number", "f/8")) })
    }

    /// The camera off at the start: `rig serve` starts all the same and says so (status and
    /// program list), refuses a program that shoots (503, nothing moves), and once the camera
    /// is there (its USB port appears: libgphoto2's virtual port is linked into the folder
    /// it searches) uses it: the status says connected, the list checks each program's
    /// exposure against the camera's choices, and a program plays and shoots.
    @Test func theServerStartsWithoutItsCameraAndUsesItWhenItComes() async throws {
        let pictures = try VirtualCamera.pictures()
        let rig = """
            {"name": "gp", "loopRateHz": 50, "output": {"type": "sim"}, "axes": [{"name": "pan", "channel": 0}],
             "camera": {"type": "gphoto2", "afterShotMs": 0}}
            """
        let one = #"{"rig": "rig.json", "kind": "steps", "trigger": "auto", "settleSeconds": 0.05, "steps": [{"pose": {"pan": 5}}]}"#
        let wrong = #"{"rig": "rig.json", "kind": "steps", "trigger": "auto", "shoot": {"exposure": {"aperture": "f/99"}}, "steps": [{"pose": {"pan": 5}}]}"#
        var environment = VirtualCamera.environment(pictures: pictures)
        let vusb = try #require(environment["IOLIBS"])
        let ports = try TestTools.temporaryDirectory().appendingPathComponent("iolibs")
        try FileManager.default.createDirectory(at: ports, withIntermediateDirectories: true)
        environment["IOLIBS"] = ports.path
        let server = try await ServeProcess(rig: rig, programs: ["one.json": one, "wrong.json": wrong], environment: environment)
        defer { server.stop() }
        let status = try await server.request("GET", "/api/status").json
        let camera = try #require(status["camera"] as? [String: Any], "\(status)")
        #expect(camera["state"] as? String == "not connected", "\(camera)")
        let (refused, body) = try await server.request("POST", "/api/play", body: #"{"program": "one.json"}"#)
        #expect(refused == 503, "\(body)")
        #expect((body["error"] as? String)?.contains("not connected") == true, "\(body)")
        #expect(try await server.request("GET", "/api/status").json["state"] as? String == "idle")

        // The camera comes: its port appears where libgphoto2 looks.
        try FileManager.default.createSymbolicLink(
            at: ports.appendingPathComponent("vusb.so"), withDestinationURL: URL(fileURLWithPath: vusb).appendingPathComponent("vusb.so"))
        try await server.waitStatus(for: .seconds(60)) { (($0["camera"] as? [String: Any])?["state"] as? String) == "connected" }
        let (listed, list) = try await server.request("GET", "/api/programs")
        #expect(listed == 200)
        let entries = (list["programs"] as? [[String: Any]]) ?? []
        let wrongEntry = entries.first { $0["file"] as? String == "wrong.json" }
        #expect(wrongEntry?["feasible"] as? Bool == false, "\(entries)")
        #expect((wrongEntry?["message"] as? String)?.contains("camera") == true, "\(entries)")
        #expect(entries.first { $0["file"] as? String == "one.json" }?["feasible"] as? Bool == true, "\(entries)")
        let (played, reply) = try await server.request("POST", "/api/play", body: #"{"program": "one.json"}"#)
        #expect(played == 202, "\(reply)")
        try await server.waitStatus(for: .seconds(60)) { json in
            ((json["lastShot"] as? [String: Any])?["file"] as? String)?.contains("GPH_") == true && (json["state"] as? String) == "idle"
        }
    }
}
