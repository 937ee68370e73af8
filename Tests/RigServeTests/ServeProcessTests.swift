import Foundation
import RigTestSupport
import Testing

/// The real binary: signals, the OpenAPI document against the running server, a real browser.
@Suite(.serialized) struct ServeProcessTests {
    @Test func sigtermParksTheRigAndTheTraceShowsIt() async throws {
        let trace = try TestTools.temporaryDirectory().appendingPathComponent("trace.csv").path
        let server = try await ServeProcess(rig: ServeSamples.rig, arguments: ["--trace", trace])
        defer { server.stop() }
        #expect(try await server.request("POST", "/api/goto", body: #"{"pose": {"pan": 30, "tilt": -20}}"#).status == 202)
        try await server.waitStatus { ($0["state"] as? String) == "idle" && ($0["pose"] as? [String: Double]) == ["pan": 30, "tilt": -20] }
        kill(server.process.processIdentifier, SIGTERM)
        #expect(try await server.waitForExit() == 0, "\(server.log)")
        #expect(server.log.contains("parked"))

        // The trace: the rig was at (30, -20) and moved back to park (0, 0) within its limits.
        let rows = try String(contentsOfFile: trace, encoding: .utf8).split(separator: "\n").dropFirst()
            .map { $0.split(separator: ",") }.filter { $0.count == 6 }
        var pan: [Double] = []
        var tilt: [Double] = []
        for row in rows {
            guard let x = Double(row[4]) else { continue }
            if row[1] == "pan" { pan.append(x) } else if row[1] == "tilt" { tilt.append(x) }
        }
        #expect(pan.contains { abs($0 - 30) < 1e-6 })
        let lastPan = try #require(pan.last)
        let lastTilt = try #require(tilt.last)
        #expect(abs(lastPan) < 1e-6 && abs(lastTilt) < 1e-6, "the last frame is (\(lastPan), \(lastTilt)), not the park pose")
        // 90°/s at 100 Hz: no frame jumps more than 0.9° (plus rounding in the CSV).
        for (a, b) in zip(pan, pan.dropFirst()) { #expect(abs(b - a) <= 0.9 + 1e-3) }
    }

    @Test func anyOtherAddressMakesATokenAndPrintsItOnce() async throws {
        let server = try await ServeProcess(rig: ServeSamples.rig, arguments: ["--listen", "0.0.0.0:0"])
        defer { server.stop() }
        let log = server.log
        let token = try #require(log.range(of: "?token=").map { String(log[$0.upperBound...].prefix(64)) })
        #expect(token.count == 64 && token.allSatisfy(\.isHexDigit))
        let file = server.directory.appendingPathComponent("state/rig/serve-token").path
        #expect(try String(contentsOfFile: file, encoding: .utf8) == token + "\n")
        #expect(try await server.request("GET", "/api/status").status == 401)
        #expect(try await server.request("POST", "/api/goto", body: #"{"pose": {"pan": 30}}"#).status == 401)
        #expect(try await server.request("GET", "/api/status", token: token).json["state"] as? String == "idle")
        let pose = try await server.request("GET", "/api/status", token: token).json["pose"] as? [String: Double]
        #expect(pose == ["pan": 0, "tilt": 0])
    }

    /// Schemathesis generates requests from the served document and checks every response
    /// against it (status codes, content types, schemas, 405 for undeclared methods).
    /// Bounded: 10 examples per operation and 30 s in all; the event stream (endless) is left out.
    @Test(
        .enabled(
            if: FileManager.default.isExecutableFile(atPath: TestTools.venv.appendingPathComponent("bin/schemathesis").path),
            "run scripts/setup --test (schemathesis in .build-venv)"))
    func theOpenAPIDocumentMatchesTheRunningServer() async throws {
        let server = try await ServeProcess(rig: ServeSamples.rig, programs: ["steps.json": ServeSamples.autoSteps])
        defer { server.stop() }
        let result = try await runTool(
            "schemathesis",
            [
                "--config-file", TestTools.packageRoot.appendingPathComponent("Tests/RigServeTests/schemathesis.toml").path,
                "run", server.baseURL + "/api/openapi.json", "--exclude-path", "/api/events", "--exclude-path", "/api/shutdown",
                "-n", "10", "--seed", "7", "--max-time", "30", "--request-timeout", "15",
                "--no-color", "--suppress-health-check", "all",
            ],
            in: server.directory, limit: .seconds(90))
        #expect(result.status == 0, "\(result.output.suffix(6000))")
    }

    /// Debian's chromium through Selenium: the page starts a program on the simulated rig,
    /// the step counter advances, STOP parks the rig. Saves a phone-sized screenshot.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/chromedriver"), "install chromium chromium-driver (scripts/setup --test)"))
    func aBrowserStartsAProgramSeesTheStepsAndStopsIt() async throws {
        let server = try await ServeProcess(rig: ServeSamples.rig, programs: ["steps.json": ServeSamples.autoSteps])
        defer { server.stop() }
        let screenshot = server.directory.appendingPathComponent("serve-phone.png").path
        let script = TestTools.packageRoot.appendingPathComponent("Tests/RigServeTests/serve_browser.py").path
        let result = try await runTool("python3", [script, server.baseURL, "steps.json", screenshot], in: server.directory, limit: .seconds(90))
        #expect(result.status == 0, "\(result.output.suffix(4000))\n--- server:\n\(server.log.suffix(2000))")
        #expect(FileManager.default.fileExists(atPath: screenshot))
        if let keep = ProcessInfo.processInfo.environment["RIG_SERVE_SCREENSHOT"] {
            _ = try? FileManager.default.removeItem(atPath: keep)
            try FileManager.default.copyItem(atPath: screenshot, toPath: keep)
        }
    }

    /// Pairing in the browser (`serve_pairing.py`, the real binary started with
    /// `--token-file`): the page says it needs pairing, the printed URL pairs it, the cookie
    /// is HttpOnly and strict, the code works once, the pairing survives a restart, a
    /// revoke shows "needs pairing" on the open page, and a typed code pairs it again.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/chromedriver"), "install chromium chromium-driver (scripts/setup --test)"))
    func aPhonePairsStaysPairedAcrossARestartAndIsRevoked() async throws {
        let directory = try TestTools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let rig = directory.appendingPathComponent("rig.json")
        try ServeSamples.rig.write(to: rig, atomically: true, encoding: .utf8)
        let script = TestTools.packageRoot.appendingPathComponent("Tests/RigServeTests/serve_pairing.py").path
        let result = try await runTool(
            "python3", [script, TestTools.rigExecutable.path, rig.path, directory.path], in: directory, limit: .seconds(180))
        #expect(result.status == 0, "\(result.output.suffix(4000))")
        for check in ["needs-pairing", "paired", "cookie", "code-once", "restart", "list", "revoked", "typed-code"] {
            #expect(result.output.contains("PASS \(check):"), "\(check): \(result.output.suffix(3000))")
        }
        print(result.output.split(separator: "\n").filter { $0.hasPrefix("PASS") }.joined(separator: "\n"))
    }

    /// The page as a field safety device in the browser (`serve_field.py`): STOP wins over a
    /// finger held on the pad, a black-holed link is shown and late jogs move nothing, a
    /// page from another origin moves nothing. Its figures go to docs/serve.md.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/chromedriver"), "install chromium chromium-driver (scripts/setup --test)"))
    func thePageIsAFieldSafetyDevice() async throws {
        let wait =
            #"{"rig": "rig.json", "kind": "steps", "trigger": "keyboard", "steps": [{"pose": {"pan": -10}}, {"pose": {"pan": 0}}, {"pose": {"pan": 10}}]}"#
        let server = try await ServeProcess(rig: ServeSamples.rig, programs: ["wait.json": wait])
        defer { server.stop() }
        let script = TestTools.packageRoot.appendingPathComponent("Tests/RigServeTests/serve_field.py").path
        let result = try await runTool("python3", [script, server.baseURL], in: server.directory, limit: .seconds(240))
        #expect(result.status == 0, "\(result.output.suffix(4000))\n--- server:\n\(server.log.suffix(2000))")
        for check in ["stop-touch", "stop-latch", "jog-in-flight", "link-lost", "foreign", "page", "night", "statuses", "bytes"] {
            #expect(result.output.contains("PASS \(check):"), "\(check): \(result.output.suffix(3000))")
        }
        print(result.output.split(separator: "\n").filter { $0.hasPrefix("FIGURE") || $0.hasPrefix("PASS") }.joined(separator: "\n"))
    }

    /// `interval:S` is one thing: the same stepped program through `rig play` and through
    /// `rig serve` (POST /api/play) reaches its steps at the same times, S apart from shot
    /// to shot, to the tick (both traces compared). A run whose loop stalled (a loaded
    /// machine without real time: the timeline pauses, then plays slower while it ramps
    /// back in) reaches its steps later: there only "never sooner than S" is checked.
    @Test func intervalMeansTheSameInPlayAndServe() async throws {
        let program = #"""
            {"rig": "rig.json", "kind": "steps", "trigger": "interval:2", "settleSeconds": 0.2,
             "steps": [{"pose": {"pan": -20}}, {"pose": {"pan": 0}}, {"pose": {"pan": 20}}, {"pose": {"pan": 40}}]}
            """#
        let dir = try TestTools.temporaryDirectory()
        let serveTrace = dir.appendingPathComponent("serve.csv").path
        let server = try await ServeProcess(rig: ServeSamples.rig, programs: ["steps.json": program], arguments: ["--trace", serveTrace])
        let (status, json) = try await server.request("POST", "/api/play", body: #"{"program": "steps.json"}"#)
        #expect(status == 202, "\(json)")
        try await server.waitStatus(for: .seconds(90)) { ($0["program"] as? String) == nil && ($0["state"] as? String) == "idle" }
        server.stop()

        try ServeSamples.rig.write(to: dir.appendingPathComponent("rig.json"), atomically: true, encoding: .utf8)
        let programPath = dir.appendingPathComponent("steps.json").path
        try program.write(toFile: programPath, atomically: true, encoding: .utf8)
        let playTrace = dir.appendingPathComponent("play.csv").path
        let play = TestProcess()
        play.executableURL = TestTools.rigExecutable
        play.arguments = ["play", programPath, "--trace", playTrace, "--no-realtime"]
        play.environment = ProcessInfo.processInfo.environment.merging(["XDG_STATE_HOME": dir.appendingPathComponent("state").path]) { $1 }
        play.standardOutput = FileHandle.nullDevice
        play.standardError = FileHandle.nullDevice
        try play.run()
        play.waitUntilExit()
        #expect(play.terminationStatus == 0)

        let targets = [-20.0, 0, 20, 40]
        let served = try Self.arrivals(trace: serveTrace, axis: "pan", targets: targets)
        let played = try Self.arrivals(trace: playTrace, axis: "pan", targets: targets)
        #expect(served.count == 4 && played.count == 4, "serve \(served), play \(played)")
        let servedGaps = zip(served, served.dropFirst()).map { $1 - $0 }
        let playedGaps = zip(played, played.dropFirst()).map { $1 - $0 }
        let stalled = try Trace(path: serveTrace).stalled(within: served) || Trace(path: playTrace).stalled(within: played)
        if !stalled {
            #expect(zip(servedGaps, playedGaps).allSatisfy { abs($0 - $1) <= 0.0101 }, "serve \(servedGaps), play \(playedGaps)")
            // Shot start to shot start: each step is ready (arrived + settled) 2 s after the last.
            #expect(servedGaps.allSatisfy { abs($0 - 2) <= 0.0101 }, "\(servedGaps)")
        }
        #expect((servedGaps + playedGaps).allSatisfy { $0 >= 2 - 0.0101 }, "serve \(servedGaps), play \(playedGaps)")
    }

    /// An interval the moves cannot keep is refused the same way by both, before anything
    /// moves: `rig play` exits 1, `rig serve` answers 422, each naming the step that cannot
    /// keep it with the same words.
    @Test func anIntervalTheMovesCannotKeepIsRefusedByBoth() async throws {
        let program = #"""
            {"rig": "rig.json", "kind": "steps", "trigger": "interval:0.5", "settleSeconds": 0.2,
             "steps": [{"pose": {"pan": -60}}, {"pose": {"pan": 60}}]}
            """#
        let server = try await ServeProcess(rig: ServeSamples.rig, programs: ["tight.json": program])
        defer { server.stop() }
        let (status, json) = try await server.request("POST", "/api/play", body: #"{"program": "tight.json"}"#)
        #expect(status == 422, "\(json)")
        let served = try #require(json["error"] as? String)
        #expect(served.contains("use a longer interval"), "\(served)")

        let dir = try TestTools.temporaryDirectory()
        try ServeSamples.rig.write(to: dir.appendingPathComponent("rig.json"), atomically: true, encoding: .utf8)
        let path = dir.appendingPathComponent("tight.json").path
        try program.write(toFile: path, atomically: true, encoding: .utf8)
        let played = try RigProcess.run(["play", path, "--no-realtime"], environment: ["XDG_STATE_HOME": dir.appendingPathComponent("state").path])
        #expect(played.status == 1, "\(played.stderr)")
        #expect(played.stderr.contains("cannot be kept (nothing moved)"), "\(played.stderr)")
        // The same miss, in the same words: the step, the interval and what it needs.
        let missLine = try #require(played.stderr.split(separator: "\n").first { $0.contains(": error: step ") })
        let miss = String(missLine[missLine.range(of: "error: ")!.upperBound...])
        #expect(served.contains(miss), "serve: \(served)\nplay: \(miss)")
    }

    /// When `axis` first reaches each of `targets` in turn (trace time, s).
    static func arrivals(trace path: String, axis: String, targets: [Double]) throws -> [Double] {
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").dropFirst()
        var result: [Double] = []
        for line in lines where result.count < targets.count {
            let fields = line.split(separator: ",")
            guard fields.count >= 5, fields[1] == axis, let time = Double(fields[0]), let position = Double(fields[4]) else { continue }
            if abs(position - targets[result.count]) < 1e-3 { result.append(time) }
        }
        return result
    }
}
