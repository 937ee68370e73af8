import Foundation
import RigSky
import RigTestSupport
import Testing

/// The real binary, spoken to in raw HTTP as an attacker would: no variant of a path gets
/// past the token, no foreign page or stale name moves the rig, and oversized bodies are
/// refused however they are sent.
@Suite(.serialized) struct ServeSecurityTests {
    /// Every route and method, with a body it would accept.
    static let routes: [(method: String, path: String, body: String?)] = [
        ("GET", "/api/status", nil), ("GET", "/api/events", nil), ("GET", "/api/programs", nil), ("GET", "/api/poses", nil),
        ("GET", "/api/openapi.json", nil), ("POST", "/api/play", #"{"program": "steps.json"}"#),
        ("POST", "/api/next", "{}"), ("POST", "/api/back", "{}"), ("POST", "/api/redo", "{}"), ("POST", "/api/pause", "{}"),
        ("POST", "/api/resume", "{}"), ("POST", "/api/jog", #"{"velocity": {"pan": 1}}"#),
        ("POST", "/api/goto", #"{"pose": {"pan": 60, "tilt": 20}}"#), ("PUT", "/api/poses/x", "{}"),
        ("POST", "/api/poses/x/goto", "{}"),
    ]

    /// Ways to write `path` that a lenient router might take for it.
    static func variants(of path: String) -> [String] {
        let tail = String(path.dropFirst("/api/".count))
        return [
            "/" + path, "/api//" + tail, "/./api/" + tail, "/api/./" + tail, path + "/", "/api%2F" + tail, "/api%2f" + tail,
            "/%61pi/" + tail, "/API/" + tail, "/api/../api/" + tail, path + "/.", path + "%2F", "/api/%2E/" + tail,
            "/api/%2e%2e/api/" + tail, "///api/" + tail, path + "?x=1", path + "//", "/api\\" + tail,
        ]
    }

    static let steps = #"{"rig": "rig.json", "kind": "steps", "trigger": "keyboard", "steps": [{"pose": {"pan": 40}}]}"#

    @Test func noPathVariantGetsPastTheTokenAndNothingMoves() async throws {
        let server = try await ServeProcess(rig: ServeSamples.rig, programs: ["steps.json": Self.steps], arguments: ["--listen", "0.0.0.0:0"])
        defer { server.stop() }
        let token = try #require(server.printedToken)
        for route in Self.routes {
            for path in [route.path] + Self.variants(of: route.path) {
                let (status, reply) = try RawHTTP.send(RawHTTP.request(route.method, path, body: route.body), port: server.port)
                #expect(status == 401 || status == 400, "\(route.method) \(path) without the token: \(status)\n\(reply.prefix(300))")
                // With the token, a variant is refused as not canonical (or is no route at
                // all): only the canonical path reaches a handler.
                if path != route.path, !path.hasSuffix("?x=1") {
                    let (withToken, _) = try RawHTTP.send(
                        RawHTTP.request(route.method, path, headers: ["Authorization: Bearer \(token)"], body: route.body), port: server.port)
                    #expect([400, 404, 405].contains(withToken), "\(route.method) \(path) with the token: \(withToken)")
                }
            }
        }
        // Nothing moved, and nothing took control.
        let (_, reply) = try RawHTTP.send(RawHTTP.request("GET", "/api/status", headers: ["Authorization: Bearer \(token)"]), port: server.port)
        #expect(reply.contains(#""state":"idle""#) && reply.contains(#""pose":{"pan":0,"tilt":0}"#) && reply.contains(#""controller":null"#), "\(reply)")
        // The page itself needs no token; everything else does.
        #expect(try RawHTTP.send(RawHTTP.request("GET", "/"), port: server.port).status == 200)
        #expect(try RawHTTP.send(RawHTTP.request("GET", "/index.html"), port: server.port).status == 401)
    }

    @Test func aForeignPageOrHostMovesNothingOnALoopbackListener() async throws {
        let server = try await ServeProcess(rig: ServeSamples.rig)
        defer { server.stop() }
        let goto = #"{"pose": {"pan": 30}}"#
        // The simple requests another site's page may send without asking first.
        let textPlain = try RawHTTP.send(RawHTTP.request("POST", "/api/goto", body: goto, contentType: "text/plain"), port: server.port)
        #expect(textPlain.status == 415, "\(textPlain.reply)")
        let form = try RawHTTP.send(
            RawHTTP.request("POST", "/api/goto", body: goto, contentType: "application/x-www-form-urlencoded"), port: server.port)
        #expect(form.status == 415)
        let noType = try RawHTTP.send(RawHTTP.request("POST", "/api/goto", body: goto, contentType: nil), port: server.port)
        #expect(noType.status == 415)
        // Another origin, as a browser marks it.
        let origin = try RawHTTP.send(RawHTTP.request("POST", "/api/goto", headers: ["Origin: http://evil.example"], body: goto), port: server.port)
        #expect(origin.status == 403, "\(origin.reply)")
        let nullOrigin = try RawHTTP.send(RawHTTP.request("POST", "/api/next", headers: ["Origin: null"]), port: server.port)
        #expect(nullOrigin.status == 403)
        let site = try RawHTTP.send(RawHTTP.request("POST", "/api/goto", headers: ["Sec-Fetch-Site: cross-site"], body: goto), port: server.port)
        #expect(site.status == 403)
        // DNS rebinding: a name that resolves here, but is not this machine's.
        let rebound = try RawHTTP.send(RawHTTP.request("GET", "/api/status", host: "evil.example:8080"), port: server.port)
        #expect(rebound.status == 403, "\(rebound.reply)")
        let reboundPost = try RawHTTP.send(RawHTTP.request("POST", "/api/goto", host: "evil.example", body: goto), port: server.port)
        #expect(reboundPost.status == 403)
        // A chunked body over the bound is 413 like a sized one.
        var chunked = Array(
            "POST /api/goto HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n".utf8)
        let chunk = [UInt8](repeating: 0x20, count: 64 << 10)
        for _ in 0..<16 { chunked += Array("10000\r\n".utf8) + chunk + Array("\r\n".utf8) }
        chunked += Array("0\r\n\r\n".utf8)
        let large = try RawHTTP.send(chunked, port: server.port)
        #expect(large.status == 413, "\(large.reply.prefix(300))")
        // Nothing moved.
        let status = try RawHTTP.send(RawHTTP.request("GET", "/api/status"), port: server.port)
        #expect(status.reply.contains(#""pose":{"pan":0,"tilt":0}"#) && status.reply.contains(#""state":"idle""#), "\(status.reply)")
        // The page's own request, same origin, is taken.
        let own = try RawHTTP.send(
            RawHTTP.request(
                "POST", "/api/goto", host: "localhost:\(server.port)", headers: ["Origin: http://localhost:\(server.port)", "Sec-Fetch-Site: same-origin"],
                body: goto),
            port: server.port)
        #expect(own.status == 202, "\(own.reply)")
    }

    /// A request that does not arrive whole in time (a client that sends its head a byte
    /// at a time, or nothing) is closed; an event stream, once asked for, is not.
    @Test func aRequestThatDoesNotArriveInTimeIsClosedButAStreamStays() async throws {
        let server = try await ServeProcess(rig: ServeSamples.rig, arguments: ["--request-timeout", "1"])
        defer { server.stop() }
        let slow = try RawHTTP.connect(port: server.port)
        defer { close(slow) }
        RawHTTP.write(slow, Array("GET /api/status HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ".utf8))
        let cut = RawHTTP.readToClose(slow)
        #expect(cut.closed, "the half-sent request was not closed: \(cut.text)")
        #expect(cut.text.isEmpty, "nothing is answered to a request that never arrived")

        let stream = try RawHTTP.connect(port: server.port)
        defer { close(stream) }
        RawHTTP.write(stream, Array("GET /api/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8))
        let opened = DispatchTime.now().uptimeNanoseconds
        var text = ""
        var buffer = [UInt8](repeating: 0, count: 4096)
        // Heartbeats keep coming well past the request timeout.
        while text.components(separatedBy: "event: heartbeat").count - 1 < 3 || DispatchTime.now().uptimeNanoseconds - opened < 2_500_000_000 {
            let n = buffer.withUnsafeMutableBytes { recv(stream, $0.baseAddress, $0.count, 0) }
            guard n > 0 else {
                Issue.record("the event stream ended after \(Double(DispatchTime.now().uptimeNanoseconds - opened) / 1e9) s: \(text.suffix(300))")
                return
            }
            text += String(decoding: buffer[0..<n], as: UTF8.self)
        }
        #expect(text.hasPrefix("HTTP/1.1 200"))
    }

    /// `--max-connections` event streams fill the server: one stream more is closed, a
    /// STOP and a status still get in (the slots kept for them), and the streams still flow.
    @Test func connectionsBeyondTheCapAreClosedButStopGetsIn() async throws {
        let server = try await ServeProcess(rig: ServeSamples.rig, arguments: ["--max-connections", "4", "--request-timeout", "120"])
        defer { server.stop() }
        // One after the other: each shows itself (a whole head, on loopback) before the next
        // opens, as a page's do; idle ones would wait in the small pool and push each other out.
        var streams: [Int32] = []
        defer { for fd in streams { close(fd) } }
        for _ in 0..<4 {
            let fd = try RawHTTP.connect(port: server.port)
            streams.append(fd)
            RawHTTP.write(fd, Array("GET /api/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8))
            #expect(Self.readUntil(fd, "data: ").contains("HTTP/1.1 200"))
        }
        let fifth = try RawHTTP.connect(port: server.port)
        defer { close(fifth) }
        RawHTTP.write(fifth, Array("GET /api/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8))
        let refused = RawHTTP.readToClose(fifth)
        #expect(refused.closed && refused.text.isEmpty, "a fifth stream: \(refused.text.prefix(200))")
        let stop = try RawHTTP.send(RawHTTP.request("POST", "/api/stop", body: "{}"), port: server.port)
        #expect(stop.status == 202, "\(stop.reply.prefix(300))")
        let status = try RawHTTP.send(RawHTTP.request("GET", "/api/status"), port: server.port)
        #expect(status.status == 200, "\(status.reply.prefix(300))")
        for fd in streams { #expect(Self.readUntil(fd, "event: heartbeat").contains("heartbeat")) }
    }

    /// Reads `fd` until `marker` has come (or the read times out).
    static func readUntil(_ fd: Int32, _ marker: String) -> String {
        var text = ""
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !text.contains(marker) {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard n > 0 else { break }
            text += String(decoding: buffer[0..<n], as: UTF8.self)
        }
        return text
    }

    /// A stranger without the token floods the server from two other loopback addresses with
    /// idle, slow-head and slow-body connections (`serve_flood.py`, bounded in count and
    /// time), on a listener that needs the token: every STOP and status sent with the token
    /// meanwhile is answered, and STOP stops a long move. Before the pool of connections
    /// that have not shown the token, 64 idle sockets refused every STOP.
    @Test func aFloodWithoutTheTokenDoesNotStarveStop() async throws {
        let directory = try TestTools.temporaryDirectory()
        let tokenFile = directory.appendingPathComponent("token").path
        let server = try await ServeProcess(rig: ServeSamples.rig, arguments: ["--token-file", tokenFile])
        defer { server.stop() }
        let token = try String(contentsOfFile: tokenFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        let script = TestTools.packageRoot.appendingPathComponent("Tests/RigServeTests/serve_flood.py").path
        let process = TestProcess()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script, String(server.port), token, "8"]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = PipeCollector(pipe)
        let status = try await poll(every: .milliseconds(50), for: .seconds(90)) { process.isRunning ? nil : process.terminationStatus }
        #expect(status == 0, "\(output.text.suffix(3000))\n--- server:\n\(server.log.suffix(2000))")
        #expect(output.text.contains("PASS flood:"), "\(output.text.suffix(3000))")
        print(output.text.split(separator: "\n").filter { $0.hasPrefix("FIGURE") || $0.hasPrefix("PASS") }.joined(separator: "\n"))
    }
}
