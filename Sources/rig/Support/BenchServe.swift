import FoundationEssentials
import Glibc
import RigRuntime

/// `rig serve` on the simulated rig for a benchmark (`rig bench serve`, `rig bench
/// liveview`): its rig file and programs written to `directory`, its state under it, a
/// loopback listener on a port it picks (read from its first lines), no real-time
/// scheduling; its output (stdout and stderr) in `directory/serve.log`. Stopped with SIGINT
/// (it parks).
final class BenchServe {
    let child: BenchChild
    let port: Int
    let directory: String

    /// - Parameters:
    ///   - rig: the rig file's text; `programs`: file name → text, in `directory/programs`.
    ///   - arguments: more of `rig serve`'s options.
    init(executable: String, directory: String, rig: String, programs: [String: String], arguments: [String] = []) throws(BenchError) {
        self.directory = directory
        let programDirectory = "\(directory)/programs"
        do {
            try FileManager.default.createDirectory(atPath: programDirectory, withIntermediateDirectories: true)
            try rig.write(toFile: "\(directory)/rig.json", atomically: true, encoding: .utf8)
            for (name, text) in programs { try text.write(toFile: "\(programDirectory)/\(name)", atomically: true, encoding: .utf8) }
        } catch { throw BenchError("cannot write the benchmark's files in \(directory): \(error)") }
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_STATE_HOME"] = "\(directory)/state"
        let log = "\(directory)/serve.log"
        let child = try BenchChild(
            executable,
            ["serve", "--rig", "\(directory)/rig.json", "--programs", programDirectory, "--listen", "127.0.0.1:0", "--no-realtime"] + arguments,
            environment: environment, output: .file(log))
        guard let port = Self.port(in: log, of: child, within: 60) else {
            child.stop(SIGKILL)
            throw BenchError("rig serve did not say where it listens (\(child.ending))")
        }
        self.child = child
        self.port = port
    }

    /// Where `rig serve` keeps its shot logs.
    var runLogs: RunLogDirectory { RunLogDirectory(stateDirectory: "\(directory)/state/rig") }

    func stop() { child.stop(SIGINT, within: 60) }

    /// Its output so far.
    var log: String { (try? String(contentsOfFile: "\(directory)/serve.log", encoding: .utf8)) ?? "" }

    /// The port from "listening on http://127.0.0.1:PORT/" in its log.
    private static func port(in log: String, of child: BenchChild, within seconds: Double) -> Int? {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline, !child.poll() {
            let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            if let range = text.firstRange(of: "listening on http://127.0.0.1:") {
                let digits = text[range.upperBound...].prefix { $0.isNumber }
                if let port = Int(digits), text[range.upperBound...].dropFirst(digits.count).first == "/" { return port }
            }
            SystemThread.sleep(seconds: 0.02)
        }
        return nil
    }

    /// Writes all of `text`; false when the connection would not take it.
    static func send(_ fd: Int32, _ text: String) -> Bool {
        let bytes = Array(text.utf8)
        return bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) } == bytes.count
    }

    /// The control key the server gave the bench (sent back with every request after).
    private var controlKey: String?

    /// One request (`line` is "METHOD PATH") with a JSON body, as the bench's one client
    /// (it keeps the control it was given), and the start of its reply.
    func request(_ line: String, body: String) -> String {
        guard let fd = try? LoopbackTCP.connect(port: port, receiveTimeoutSeconds: 30).get() else { return "" }
        defer { close(fd) }
        let key = controlKey.map { "X-Rig-Control: \($0)\r\n" } ?? ""
        let request =
            "\(line) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nX-Rig-Client: bench\r\n\(key)Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)"
        guard Self.send(fd, request) else { return "" }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let n = read(fd, &buffer, buffer.count)
        let reply = n > 0 ? String(decoding: buffer[..<n], as: UTF8.self) : ""
        if let field = reply.split(separator: "\r\n").first(where: { $0.lowercased().hasPrefix("x-rig-control:") }) {
            controlKey = field.dropFirst("x-rig-control:".count).trimmed()
        }
        return reply
    }
}
