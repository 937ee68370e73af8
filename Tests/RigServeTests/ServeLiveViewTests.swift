import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import RigCore
import RigRuntime
import RigTestSupport
import Testing

@testable import RigServe

#if canImport(Glibc)
    import Glibc
#endif

/// `GET /api/liveview` on the real binary: MJPEG parts of the camera's own JPEGs, to two
/// viewers at once (one that never reads holds up nothing), the status following it, the
/// token's rule as every route's, and a camera without live view said in one line.
@Suite struct ServeLiveViewTests {
    static let rig = """
        {"name": "head with a live view", "loopRateHz": 100, "output": {"type": "sim"},
         "axes": [{"name": "pan", "channel": 0, "softLimits": [-85, 85], "maxVelocity": 60, "maxAcceleration": 120},
                  {"name": "tilt", "channel": 1, "softLimits": [-40, 40], "maxVelocity": 60, "maxAcceleration": 120}],
         "camera": {"type": "sim", "preview": {"fps": 20, "width": 96, "height": 64}}}
        """

    /// An MJPEG stream read off a socket: its parts as they come.
    struct MJPEGReader {
        private(set) var fd: Int32
        var buffer: [UInt8] = []
        var head = ""

        init(port: Int, path: String = "/api/liveview", headers: [String] = []) throws {
            fd = try RawHTTP.connect(port: port, timeoutSeconds: 30)
            let request = (["GET \(path) HTTP/1.1", "Host: 127.0.0.1"] + headers).joined(separator: "\r\n") + "\r\n\r\n"
            RawHTTP.write(fd, Array(request.utf8))
        }

        /// Closes the socket once: a second close could close another test's descriptor that
        /// took the number meanwhile (a pipe of a concurrent test was lost so).
        mutating func close() {
            guard fd >= 0 else { return }
            Glibc.close(fd)
            fd = -1
        }

        /// Reads until `count` bytes are buffered; false if the server closed first.
        mutating func fill(_ count: Int) -> Bool {
            var chunk = [UInt8](repeating: 0, count: 64 << 10)
            while buffer.count < count {
                let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                if n <= 0 { return false }
                buffer.append(contentsOf: chunk[0..<n])
            }
            return true
        }

        /// Reads up to the next blank line; the text before it.
        mutating func line(endingWith end: [UInt8] = Array("\r\n\r\n".utf8)) -> String? {
            while true {
                if let range = find(end) {
                    let text = String(decoding: buffer[0..<range], as: UTF8.self)
                    buffer.removeFirst(range + end.count)
                    return text
                }
                guard fill(buffer.count + 1) else { return nil }
            }
        }

        private func find(_ needle: [UInt8]) -> Int? {
            guard buffer.count >= needle.count else { return nil }
            for i in 0...(buffer.count - needle.count) where buffer[i] == needle[0] && Array(buffer[i..<(i + needle.count)]) == needle {
                return i
            }
            return nil
        }

        /// The reply's head (status line and headers).
        mutating func readHead() -> String? {
            head = line() ?? ""
            return head.isEmpty ? nil : head
        }

        /// The next part: its frame number (X-Rig-Frame) and JPEG, or nil at the end.
        mutating func nextPart() -> (number: Int, jpeg: [UInt8])? {
            guard let partHead = line() else { return nil }
            let fields = partHead.split(separator: "\r\n")
            guard fields.contains("--\(ServeRoutes.liveViewBoundary)") else { return nil }
            func value(_ name: String) -> String? {
                let field = fields.first { $0.lowercased().hasPrefix(name.lowercased() + ":") }
                return field.map { String($0.dropFirst(name.count + 1)).trimmingCharacters(in: .whitespaces) }
            }
            guard let length = value("Content-Length").flatMap(Int.init), let number = value("X-Rig-Frame").flatMap(Int.init),
                fill(length + 2)
            else { return nil }
            let jpeg = Array(buffer[0..<length])
            buffer.removeFirst(length + 2)
            return (number, jpeg)
        }
    }

    static func liveView(_ json: [String: Any]) -> [String: Any]? {
        (json["camera"] as? [String: Any])?["liveView"] as? [String: Any]
    }

    @Test func twoViewersGetFramesAndOneThatDoesNotReadHoldsUpNothing() async throws {
        let server = try await ServeProcess(rig: Self.rig)
        defer { server.stop() }
        let (_, before) = try await server.request("GET", "/api/status")
        #expect(Self.liveView(before)?["state"] as? String == "off")

        // A viewer that asks and never reads a byte.
        var idle = try MJPEGReader(port: server.port)
        defer { idle.close() }
        var reader = try MJPEGReader(port: server.port)
        defer { reader.close() }
        let readHead = reader.readHead()
        let head = try #require(readHead)
        #expect(head.hasPrefix("HTTP/1.1 200"))
        #expect(head.lowercased().contains("content-type: multipart/x-mixed-replace; boundary=\(ServeRoutes.liveViewBoundary)"))
        var numbers: [Int] = []
        for _ in 0..<8 {
            let next = reader.nextPart()
            let part = try #require(next, "the stream ended after \(numbers.count) frames")
            let decoded = try #require(JPEG.decode(part.jpeg), "part \(part.number) is not a JPEG")
            #expect(decoded.width == 96 && decoded.height == 64)
            #expect(LiveViewFrame.readStamp(part.jpeg)?.number == part.number)
            numbers.append(part.number)
        }
        #expect(zip(numbers, numbers.dropFirst()).allSatisfy { $0 < $1 }, "\(numbers)")
        // Both are watching; watching takes no control.
        let (_, watching) = try await server.request("GET", "/api/status")
        #expect(Self.liveView(watching)?["state"] as? String == "on")
        #expect(Self.liveView(watching)?["viewers"] as? Int == 2)
        // The lens's field of view, for the page's level line (the simulated camera's default).
        #expect(Self.liveView(watching)?["fovDeg"] as? Double == 60)
        #expect(watching["controller"] is NSNull)

        // Both gone: the camera's live view goes off.
        reader.close()
        idle.close()
        try await server.waitStatus { json in
            Self.liveView(json)?["viewers"] as? Int == 0 && Self.liveView(json)?["state"] as? String == "off"
        }
    }

    /// A camera that stalls (the simulated camera's fault: no frame for 2 s after the
    /// third): the status says `stalled` with its one line, the log says it once and once
    /// more when the frames come back, and the same stream goes on with the next frame.
    @Test func aStalledCameraIsSaidOnceAndTheStreamGoesOn() async throws {
        let rig = Self.rig.replacingOccurrences(
            of: #""width": 96, "height": 64}"#, with: #""width": 96, "height": 64, "faults": {"stallAfterFrames": 3, "stallSeconds": 6}}"#)
        let server = try await ServeProcess(rig: rig)
        defer { server.stop() }
        let port = server.port
        let reading = Task {
            try await onThread { () throws -> [Int] in
                var reader = try MJPEGReader(port: port)
                defer { reader.close() }
                guard reader.readHead()?.hasPrefix("HTTP/1.1 200") == true else { return [] }
                return (0..<4).compactMap { _ in reader.nextPart()?.number }
            }
        }
        // The stall is said after 1 s without a frame and lasts until the 6th second. The
        // status is polled on a thread of its own with plain sockets: a poll on the
        // cooperative pool was starved past the whole window in a loaded full run.
        let stalled = try await onThread { () -> Bool in
            let deadline = Date().addingTimeInterval(60)
            while Date() < deadline {
                let (_, reply) = try RawHTTP.send(RawHTTP.request("GET", "/api/status"), port: port, timeoutSeconds: 10)
                let body = reply.components(separatedBy: "\r\n\r\n").dropFirst().joined(separator: "\r\n\r\n")
                if let json = (try? JSONSerialization.jsonObject(with: Data(body.utf8))) as? [String: Any], let live = Self.liveView(json),
                    live["state"] as? String == "stalled", (live["problem"] as? String)?.contains("no frame for") == true
                {
                    return true
                }
                usleep(20_000)
            }
            return false
        }
        #expect(stalled, "the status never said stalled: \(server.log)")
        let numbers = try await reading.value
        #expect(numbers == [1, 2, 3, 4], "the stream after the stall: \(numbers)")
        _ = try await poll(every: .milliseconds(50), for: .seconds(30)) { server.log.contains("frames again after") ? true : nil }
        let log = server.log
        #expect(log.components(separatedBy: "no frame for").count - 1 == 1, "\(log)")
        #expect(log.components(separatedBy: "frames again after").count - 1 == 1, "\(log)")
    }

    @Test func theStreamNeedsTheTokenAsEveryRouteDoes() async throws {
        let rig = try RigParser.parse(text: Self.rig, file: "test-rig.json")
        let config = try #require(try rig.camera.map { try SimCamera.parseConfig($0) })
        let camera = SimCamera(preview: config.preview, axisNames: ["pan", "tilt"], restPose: [0, 0])
        let token = AccessToken(text: String(repeating: "ab12", count: 16))!
        let fixture = try ServeFixture(listen: "0.0.0.0:8080", token: token, rigText: Self.rig, camera: camera)
        defer { fixture.finish() }
        try await fixture.application.test(.router) { client in
            let refused = try await client.execute(uri: "/api/liveview", method: .get, headers: .client("a"))
            #expect(refused.status == .unauthorized)
            let wrong = try await client.execute(uri: "/api/liveview", method: .get, headers: .client("a", token: String(repeating: "cd34", count: 16)))
            #expect(wrong.status == .unauthorized)
        }
        // Refused before the camera was asked for anything.
        #expect(camera.liveView.viewerCount == 0 && camera.liveView.publishedCount == 0)
    }

    @Test func noCameraIsNotFoundAndACameraWithoutLiveViewSaysSo() async throws {
        let bare = try ServeFixture()
        defer { bare.finish() }
        try await bare.application.test(.router) { client in
            let none = try await client.execute(uri: "/api/liveview", method: .get, headers: .client("a"))
            #expect(none.status == .notFound)
            #expect(none.text.contains("no camera"))
        }
        let plain = try ServeFixture(camera: SimCamera())
        defer { plain.finish() }
        try await plain.application.test(.router) { client in
            let refused = try await client.execute(uri: "/api/liveview", method: .get, headers: .client("a"))
            #expect(refused.status == .conflict)
            #expect(refused.text.contains(LiveViewFeed.noLiveView))
            let status = try await client.execute(uri: "/api/status", method: .get, headers: .client("a"))
            let live = try #require(Self.liveView(status.json))
            #expect(live["state"] as? String == "unsupported")
            #expect((live["problem"] as? String)?.hasPrefix(LiveViewFeed.noLiveView) == true)
            #expect(live["fovDeg"] is NSNull)
        }
    }
}

/// libgphoto2's virtual camera has no live view (`capture_preview` answers -6): the first
/// viewer gets 409 with the one line, the status says `unsupported`, and the camera is
/// never asked again (a second viewer is refused at once).
@Suite(.enabled(if: VirtualCamera.available, Comment(rawValue: VirtualCamera.missing)))
struct ServeGPhoto2LiveViewTests {
    @Test func theVirtualCamerasMissingLiveViewIsOneClearState() async throws {
        let pictures = try VirtualCamera.pictures()
        let rig = """
            {"name": "gp", "loopRateHz": 50, "output": {"type": "sim"}, "axes": [{"name": "pan", "channel": 0}],
             "camera": {"type": "gphoto2", "afterShotMs": 0}}
            """
        let server = try await ServeProcess(rig: rig, environment: VirtualCamera.environment(pictures: pictures))
        defer { server.stop() }
        let first = try await server.fetch("/api/liveview")
        #expect(first.status == 409)
        let line = String(decoding: first.body, as: UTF8.self)
        #expect(line.contains(LiveViewFeed.noLiveView), "\(line)")
        let (_, status) = try await server.request("GET", "/api/status")
        let live = try #require(ServeLiveViewTests.liveView(status))
        #expect(live["state"] as? String == "unsupported")
        #expect((live["problem"] as? String)?.hasPrefix(LiveViewFeed.noLiveView) == true)
        let again = try await server.fetch("/api/liveview")
        #expect(again.status == 409)
        // No AF point setting either: tap to focus is refused with its one line, said in the status.
        let focus = try #require(live["focus"] as? [String: Any])
        #expect(focus["available"] as? Bool == false)
        let focusLine = try #require(focus["problem"] as? String)
        #expect(focusLine.contains("offers no AF point through libgphoto2") && !focusLine.contains("\n"), "\(focusLine)")
        let (tapped, refusal) = try await server.request("POST", "/api/focus", body: #"{"x": 0.5, "y": 0.5}"#)
        #expect(tapped == 409 && refusal["error"] as? String == focusLine, "\(refusal)")
        // Said once in the log, not an error loop.
        #expect(server.log.components(separatedBy: LiveViewFeed.noLiveView).count - 1 == 1, "\(server.log)")
        // The camera still shoots: the status says connected.
        #expect((status["camera"] as? [String: Any])?["state"] as? String == "connected")
    }

    /// The page in Debian's chromium says it in the same one line under the pad, with no
    /// Focus button (`serve_aim.py --no-af`).
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/chromedriver"), "install chromium chromium-driver (scripts/setup --test)"))
    func thePageSaysTheVirtualCameraHasNoAFPoint() async throws {
        let pictures = try VirtualCamera.pictures()
        let rig = """
            {"name": "gp", "loopRateHz": 50, "output": {"type": "sim"}, "axes": [{"name": "pan", "channel": 0}],
             "camera": {"type": "gphoto2", "afterShotMs": 0}}
            """
        let server = try await ServeProcess(rig: rig, environment: VirtualCamera.environment(pictures: pictures))
        defer { server.stop() }
        let script = TestTools.packageRoot.appendingPathComponent("Tests/RigServeTests/serve_aim.py").path
        let result = try await runTool("python3", [script, server.baseURL, "--no-af"], in: server.directory, limit: .seconds(90))
        #expect(result.status == 0 && result.output.contains("PASS no-af:"), "\(result.output.suffix(3000))\n--- server:\n\(server.log.suffix(2000))")
    }
}

/// Tap to focus through the API on the simulated camera: the view's point in the camera's
/// AF coordinates (its 3:2 sensor, of which the 4:3 view shows the middle), the status's
/// AF point, control taken as any camera change; refused in one line where it cannot.
@Suite struct TapToFocusTests {
    @Test func aTapPutsTheAFPointThereInTheCamerasCoordinates() async throws {
        let rigText = ServeLiveViewTests.rig.replacingOccurrences(of: #""width": 96, "height": 64}"#, with: #""width": 96, "height": 72}"#)
        let rig = try RigParser.parse(text: rigText, file: "rig.json")
        let config = try SimCamera.parseConfig(try #require(rig.camera))
        let camera = SimCamera(preview: config.preview, axisNames: rig.axes.map(\.name), restPose: rig.homePose)
        let fixture = try ServeFixture(rigText: rigText, camera: camera)
        defer { fixture.finish() }
        try await fixture.application.test(.router) { client in
            let before = try await client.execute(uri: "/api/status", method: .get, headers: .client("a"))
            let available = try #require(ServeLiveViewTests.liveView(before.json)?["focus"] as? [String: Any])
            #expect(available["available"] as? Bool == true && available["problem"] is NSNull && available["point"] is NSNull, "\(available)")
            let tap = try await client.execute(
                uri: "/api/focus", method: .post, headers: .client("a"), body: jsonBody(#"{"x": 0.25, "y": 0.9, "aspect": 1.3333333333}"#))
            #expect(tap.status == .ok, "\(tap.text)")
            // 4000 × 4/3 = 5333.3 wide from x = 333.3: 333.3 + 0.25 × 5333.3 = 1666.7; 0.9 × 4000.
            #expect(tap.json["cameraX"] as? Int == 1667 && tap.json["cameraY"] as? Int == 3600, "\(tap.text)")
            #expect(tap.json["grid"] as? [Int] == [6000, 4000])
            #expect((tap.json["setting"] as? String)?.hasPrefix("afpoint=1667,3600") == true, "\(tap.text)")
            #expect(tap.controlKey != nil)
            let after = try await client.execute(uri: "/api/status", method: .get, headers: .client("a"))
            let point = try #require((ServeLiveViewTests.liveView(after.json)?["focus"] as? [String: Any])?["point"] as? [String: Any])
            #expect(point["x"] as? Double == 0.25 && point["y"] as? Double == 0.9)
            // Another client only watches; nonsense is refused before anything.
            let other = try await client.execute(uri: "/api/focus", method: .post, headers: .client("b"), body: jsonBody(#"{"x": 0.5, "y": 0.5}"#))
            #expect(other.status == .conflict)
            let wild = try await client.execute(uri: "/api/focus", method: .post, headers: .client("a"), body: jsonBody(#"{"x": 0.5, "y": -1}"#))
            #expect(wild.status == .badRequest)
        }
    }

    @Test func aCameraWithoutAnAFPointToTapSaysSoInOneLine() async throws {
        let plain = try ServeFixture(camera: SimCamera())
        defer { plain.finish() }
        try await plain.application.test(.router) { client in
            let refused = try await client.execute(uri: "/api/focus", method: .post, headers: .client("a"), body: jsonBody(#"{"x": 0.5, "y": 0.5}"#))
            #expect(refused.status == .conflict && refused.text.contains("no live view to tap"), "\(refused.text)")
            let status = try await client.execute(uri: "/api/status", method: .get, headers: .client("a"))
            let focus = try #require(ServeLiveViewTests.liveView(status.json)?["focus"] as? [String: Any])
            #expect(focus["available"] as? Bool == false && (focus["problem"] as? String)?.contains("no live view to tap") == true)
            // Refused before control was taken.
            #expect(status.json["controller"] is NSNull)
        }
        let bare = try ServeFixture()
        defer { bare.finish() }
        try await bare.application.test(.router) { client in
            let none = try await client.execute(uri: "/api/focus", method: .post, headers: .client("a"), body: jsonBody(#"{"x": 0.5, "y": 0.5}"#))
            #expect(none.status == .conflict && none.text.contains("no camera"), "\(none.text)")
        }
    }
}

extension ServeLiveViewTests {
    /// The page in Debian's chromium (`serve_liveview.py`): the live view painted behind
    /// the jog pad with its thirds grid; the level line on the scene's horizon; the
    /// histogram of the frame shown; the crop mode, its 100 % crop and sharpness following
    /// the focus; captured → painted latency, and the newest-frame rule through a throttled
    /// link (fewer frames, no growing delay); a new frame as the rig pans, STOP on top and
    /// stopping a long move while it plays.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/chromedriver"), "install chromium chromium-driver (scripts/setup --test)"))
    func thePagePaintsTheLiveViewAndStopStillWorks() async throws {
        let rig = """
            {"name": "head with a live view", "loopRateHz": 100, "output": {"type": "sim"},
             "axes": [{"name": "pan", "channel": 0, "softLimits": [-85, 85], "maxVelocity": 10, "maxAcceleration": 40},
                      {"name": "tilt", "channel": 1, "softLimits": [-40, 40], "maxVelocity": 60, "maxAcceleration": 240}],
             "camera": {"type": "sim", "preview": {"fps": 10, "width": 320, "height": 240, "fovDeg": 60}}}
            """
        let server = try await ServeProcess(rig: rig)
        defer { server.stop() }
        let script = TestTools.packageRoot.appendingPathComponent("Tests/RigServeTests/serve_liveview.py").path
        let result = try await runTool("python3", [script, server.baseURL], in: server.directory, limit: .seconds(150))
        #expect(result.status == 0, "\(result.output.suffix(4000))\n--- server:\n\(server.log.suffix(2000))")
        for check in ["painted", "level", "histogram", "crop", "sharpness", "latency", "throttled", "follows", "stop", "after-stop"] {
            #expect(result.output.contains("PASS \(check):"), "\(check): \(result.output.suffix(3000))")
        }
    }
}

extension ServeLiveViewTests {
    /// Tap to aim in Debian's chromium (`serve_aim.py`): a marker of the simulated camera's
    /// test scene found in the painted frame, tapped with a finger after Aim, comes to the
    /// centre of the next frames (within 1 % of the width) with the rig at the marker's own
    /// pan and tilt; STOP on top stops an aim on its way, the live view still on. Then tap
    /// to focus: the tapped ground comes sharp in the next frames, the AF point drawn there.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/chromedriver"), "install chromium chromium-driver (scripts/setup --test)"))
    func aTapOnTheLiveViewBringsThatPointToTheCentre() async throws {
        let rig = """
            {"name": "head with a live view", "loopRateHz": 100, "output": {"type": "sim"},
             "axes": [{"name": "pan", "channel": 0, "softLimits": [-85, 85], "maxVelocity": 20, "maxAcceleration": 40},
                      {"name": "tilt", "channel": 1, "softLimits": [-40, 40], "maxVelocity": 20, "maxAcceleration": 40}],
             "camera": {"type": "sim", "preview": {"fps": 10, "width": 480, "height": 360, "fovDeg": 90, "quality": 85}}}
            """
        let server = try await ServeProcess(rig: rig)
        defer { server.stop() }
        let script = TestTools.packageRoot.appendingPathComponent("Tests/RigServeTests/serve_aim.py").path
        let result = try await runTool("python3", [script, server.baseURL], in: server.directory, limit: .seconds(150))
        #expect(result.status == 0, "\(result.output.suffix(4000))\n--- server:\n\(server.log.suffix(2000))")
        for check in ["found", "centred", "stop", "focus"] {
            #expect(result.output.contains("PASS \(check):"), "\(check): \(result.output.suffix(3000))")
        }
    }
}

/// Tap to aim: a point of the view is turned to the centre, within the soft limits.
@Suite struct TapToAimTests {
    /// The geometry against directions worked out by hand (90° lens: tan 45° = 1): a marker
    /// of the test scene at pan 30° on the horizon is 0.789 across the view from pan 0; the
    /// one at pan 30°, tilt 30° is at the top edge of a 3:2 view.
    @Test func aPointOfTheViewIsWhereThePanAndTiltWouldCentreIt() {
        let across = 0.5 + tan(30 * Double.pi / 180) / 2
        let level = ViewAim.target(panDegrees: 0, tiltDegrees: 0, x: across, y: 0.5, horizontalFOVDegrees: 90, aspect: 1.5)
        #expect(abs(level.pan - 30) < 1e-9 && abs(level.tilt) < 1e-9)
        let up = ViewAim.target(panDegrees: 0, tiltDegrees: 0, x: across, y: 0, horizontalFOVDegrees: 90, aspect: 1.5)
        #expect(abs(up.pan - 30) < 1e-9 && abs(up.tilt - 30) < 1e-9, "\(up)")
        // The centre is where the head points, wherever that is; pan stays continuous past ±180°.
        let centre = ViewAim.target(panDegrees: 170, tiltDegrees: -20, x: 0.5, y: 0.5, horizontalFOVDegrees: 50, aspect: 1.5)
        #expect(abs(centre.pan - 170) < 1e-9 && abs(centre.tilt + 20) < 1e-9)
        let past = ViewAim.target(panDegrees: 170, tiltDegrees: 0, x: 1, y: 0.5, horizontalFOVDegrees: 40, aspect: 1.5)
        #expect(abs(past.pan - 190) < 1e-9)
    }

    @Test func aTapMovesTheHeadAndAPointBeyondALimitIsRefused() async throws {
        let rigText = ServeLiveViewTests.rig.replacingOccurrences(of: #""width": 96, "height": 64}"#, with: #""width": 96, "height": 64, "fovDeg": 90}"#)
        let rig = try RigParser.parse(text: rigText, file: "rig.json")
        let config = try SimCamera.parseConfig(try #require(rig.camera))
        let camera = SimCamera(preview: config.preview, axisNames: rig.axes.map(\.name), restPose: rig.homePose)
        let fixture = try ServeFixture(rigText: rigText, camera: camera)
        defer { fixture.finish() }
        try await fixture.application.test(.router) { client in
            let across = 0.5 + tan(30 * Double.pi / 180) / 2
            let aim = try await client.execute(
                uri: "/api/aim", method: .post, headers: .client("a"), body: jsonBody(#"{"x": \#(across), "y": 0.5, "aspect": 1.5}"#))
            #expect(aim.status == .accepted, "\(aim.text)")
            #expect(abs((aim.json["pan"] as? Double ?? 0) - 30) < 0.01)
            let key = try #require(aim.controlKey)
            _ = try await fixture.waitStatus { abs(($0.pose["pan"] ?? 0) - 30) < 0.01 && $0.state == .idle }
            // The top edge of a square 90° view is 45° up: beyond tilt's 40°.
            let beyond = try await client.execute(
                uri: "/api/aim", method: .post, headers: .client("a", key: key), body: jsonBody(#"{"x": 0.5, "y": 0, "aspect": 1}"#))
            #expect(beyond.status == .conflict && beyond.text.contains("beyond its soft limits"), "\(beyond.text)")
            // Nonsense is refused before anything moves; another client only watches.
            let wild = try await client.execute(
                uri: "/api/aim", method: .post, headers: .client("a", key: key), body: jsonBody(#"{"x": 2, "y": 0.5}"#))
            #expect(wild.status == .badRequest)
            let other = try await client.execute(uri: "/api/aim", method: .post, headers: .client("b"), body: jsonBody(#"{"x": 0.5, "y": 0.5}"#))
            #expect(other.status == .conflict)
            #expect(abs((fixture.console.status(controller: nil).pose["pan"] ?? 0) - 30) < 0.01)
        }
    }

    /// A camera that does not say its lens needs the field of view from the client.
    @Test func withoutTheLensTheFieldOfViewMustBeGiven() async throws {
        let fixture = try ServeFixture()
        defer { fixture.finish() }
        try await fixture.application.test(.router) { client in
            let missing = try await client.execute(uri: "/api/aim", method: .post, headers: .client("a"), body: jsonBody(#"{"x": 0.6, "y": 0.5}"#))
            #expect(missing.status == .conflict && missing.text.contains("fovDeg"), "\(missing.text)")
            let given = try await client.execute(
                uri: "/api/aim", method: .post, headers: .client("a"), body: jsonBody(#"{"x": 0.6, "y": 0.5, "fovDeg": 40}"#))
            #expect(given.status == .accepted, "\(given.text)")
        }
    }
}
