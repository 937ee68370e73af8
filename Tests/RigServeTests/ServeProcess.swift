import Foundation
import RigTestSupport
import Synchronization

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The real `rig serve` binary on a free loopback port, with its state in a fresh folder.
final class ServeProcess: Sendable {
    let process: ChildProcess
    let baseURL: String
    let directory: URL
    private let output: PipeCollector

    /// Starts `rig serve --rig RIG --listen 127.0.0.1:0 …` and waits (bounded) for the
    /// line with its URL.
    /// - Parameter environment: more variables for the server (the virtual camera's).
    init(rig: String, programs: [String: String] = [:], arguments: [String] = [], environment extra: [String: String] = [:]) async throws {
        directory = try TestTools.temporaryDirectory()
        let programDirectory = directory.appendingPathComponent("programs")
        try FileManager.default.createDirectory(at: programDirectory, withIntermediateDirectories: true)
        for (name, text) in programs {
            try text.write(to: programDirectory.appendingPathComponent(name), atomically: true, encoding: .utf8)
        }
        let rigPath = directory.appendingPathComponent("rig.json").path
        try rig.write(toFile: rigPath, atomically: true, encoding: .utf8)
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_STATE_HOME"] = directory.appendingPathComponent("state").path
        environment.merge(extra) { _, new in new }
        let pipe = Pipe()
        // A ChildProcess, not a Foundation Process: Foundation's reaper thread was found
        // blocked in waitpid on a `rig serve` that still ran, which stalled every other
        // process of the run (see ChildProcess).
        let process = try ChildProcess(
            TestTools.rigExecutable,
            [
                "serve", "--rig", rigPath, "--programs", programDirectory.path, "--listen", "127.0.0.1:0",
                "--no-realtime",
            ] + arguments,
            environment: environment, stdout: pipe.fileHandleForWriting.fileDescriptor, stderr: pipe.fileHandleForWriting.fileDescriptor,
            directory: directory)
        pipe.fileHandleForWriting.closeFile()
        let output = PipeCollector(pipe)
        self.process = process
        self.output = output
        baseURL = try await poll(for: .seconds(60)) {
            let text = output.text
            // "listening on http://HOST:PORT/" or, with a new token, "open http://HOST:PORT/?token=…".
            guard let range = text.range(of: "listening on http://") ?? text.range(of: "open http://") else {
                if !process.isRunning { throw ServeProcessFailed(output: text) }
                return nil
            }
            let rest = text[range.upperBound...]
            guard let end = rest.firstIndex(where: { $0 == "/" || $0 == " " || $0 == "\n" }),
                let colon = rest[..<end].lastIndex(of: ":")
            else { return nil }
            // Whatever address it listens on, the test reaches it on loopback.
            return "http://127.0.0.1" + rest[colon..<end]
        }
    }

    var log: String { output.text }

    /// The loopback port it listens on.
    var port: Int { Int(baseURL.split(separator: ":").last ?? "") ?? 0 }

    /// The token it printed (a non-loopback listener), if any.
    var printedToken: String? {
        log.range(of: "?token=").map { String(log[$0.upperBound...].prefix(64)) }
    }

    struct ServeProcessFailed: Error, CustomStringConvertible {
        var output: String
        var description: String { "rig serve exited early:\n\(output)" }
    }

    /// One request; the JSON body as a dictionary.
    @discardableResult
    func request(_ method: String, _ path: String, body: String? = nil, token: String? = nil) async throws -> (status: Int, json: [String: Any]) {
        var request = URLRequest(url: URL(string: baseURL + path)!)
        request.httpMethod = method
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        request.setValue("test", forHTTPHeaderField: "X-Rig-Client")
        if let body {
            request.httpBody = Data(body.utf8)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        let (data, response) = try await URLSession.shared.data(for: request)
        let json = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, json)
    }

    /// A GET's status and raw bytes.
    func fetch(_ path: String) async throws -> (status: Int, body: Data, type: String?) {
        var request = URLRequest(url: URL(string: baseURL + path)!)
        request.setValue("test", forHTTPHeaderField: "X-Rig-Client")
        let (data, response) = try await URLSession.shared.data(for: request)
        let http = response as? HTTPURLResponse
        return (http?.statusCode ?? 0, data, http?.value(forHTTPHeaderField: "Content-Type"))
    }

    /// Waits (bounded) until `/api/status` satisfies `condition`.
    @discardableResult
    func waitStatus(for limit: Duration = .seconds(30), _ condition: @escaping @Sendable ([String: Any]) -> Bool) async throws -> Bool {
        try await poll(every: .milliseconds(50), for: limit) { [self] in
            let (_, json) = try await request("GET", "/api/status")
            return condition(json) ? true : nil
        }
    }

    /// Waits (bounded) for the process to exit; its status.
    func waitForExit(within limit: Duration = .seconds(30)) async throws -> Int32 {
        try await poll(every: .milliseconds(20), for: limit) { [process] in process.isRunning ? nil : process.terminationStatus }
    }

    func stop() {
        if process.isRunning { process.interrupt() }
        process.waitUntilExit()
        try? FileManager.default.removeItem(at: directory)
    }
}

/// The test rig and programs (the repository's pan/tilt head, simulated).
enum ServeSamples {
    static var rig: String {
        (try? String(contentsOf: TestTools.packageRoot.appendingPathComponent("rigs/pantilt.json"), encoding: .utf8)) ?? ""
    }

    /// Six quick shots, advanced as soon as each settles.
    static let autoSteps = #"""
        {"rig": "rig.json", "kind": "steps", "trigger": "auto", "settleSeconds": 0.6,
         "steps": [{"pose": {"pan": -40, "tilt": 10}}, {"pose": {"pan": -20}}, {"pose": {"pan": 0}},
                   {"pose": {"pan": 20}}, {"pose": {"pan": 40}}, {"pose": {"pan": 60, "tilt": -10}}]}
        """#
}
