import Foundation
import RigTestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// A DFMoco client written from the protocol text (REFERENCE §7): sends `\r\n`-terminated
/// ASCII lines and reads the device's lines, each read bounded by a deadline.
final class DFMocoClient {
    let fd: Int32
    private var pending: [UInt8] = []
    /// Every line received, in order.
    private(set) var received: [String] = []
    private var next = 0

    init(fd: Int32) { self.fd = fd }

    /// A TCP connection to 127.0.0.1:`port`.
    static func connect(port: UInt16) throws -> DFMocoClient {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard fd >= 0, result == 0 else { throw HarnessError("connect to port \(port): errno \(errno)") }
        return DFMocoClient(fd: fd)
    }

    private var closed = false

    /// Closes the socket once: a second close could close a descriptor another test (a
    /// pipe, a process's socket) has taken since.
    func close() {
        guard !closed else { return }
        closed = true
        _ = Glibc.close(fd)
    }

    func send(_ line: String) { sendRaw(Array((line + "\r\n").utf8)) }

    func sendRaw(_ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if n <= 0 { return }
            offset += n
        }
    }

    /// The next received line for which `matching` holds (lines before it are skipped, and
    /// stay in `received`), within `seconds`.
    func line(within seconds: Double = 10, where matching: (String) -> Bool) throws -> String {
        let deadline = Date().addingTimeInterval(seconds)
        while true {
            while next < received.count {
                let line = received[next]
                next += 1
                if matching(line) { return line }
            }
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else { throw HarnessError("no matching line within \(seconds) s; received: \(received.suffix(8))") }
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&pfd, 1, Int32(min(left, 1) * 1000) + 1) > 0 else { continue }
            var buffer = [UInt8](repeating: 0, count: 4096)
            let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            guard n > 0 else { throw HarnessError("connection closed; received: \(received.suffix(8))") }
            pending += buffer[0..<n]
            while let end = pending.firstIndex(of: 0x0A) {
                var line = Array(pending[..<end])
                if line.last == 0x0D { line.removeLast() }
                received.append(String(decoding: line, as: UTF8.self))
                pending.removeSubrange(...end)
            }
        }
    }

    /// Sends `request` and returns the first reply starting with `prefix`.
    func ask(_ request: String, expecting prefix: String) throws -> String {
        send(request)
        return try line { $0.hasPrefix(prefix) }
    }

    /// Asks `ms` until every motor is still (Dragonframe's own wait), within `seconds`.
    func waitUntilStopped(within seconds: Double = 15) throws {
        let deadline = Date().addingTimeInterval(seconds)
        while true {
            let status = try ask("ms", expecting: "ms ")
            if !status.dropFirst(3).contains("1") { return }
            guard deadline.timeIntervalSinceNow > 0 else { throw HarnessError("still moving after \(seconds) s: \(status)") }
            // The next mp line (sent while anything moves) paces the polling.
            _ = try? line(within: 0.5) { $0.hasPrefix("mp ") }
        }
    }

    /// The step count in an `mp <motor> <pos>` reply.
    func position(_ motor: Int) throws -> Int {
        let reply = try ask("mp \(motor)", expecting: "mp \(motor) ")
        guard let value = Int(reply.split(separator: " ").last ?? "") else { throw HarnessError("bad reply \(reply)") }
        return value
    }
}

struct HarnessError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// `rig serve dfmoco` running as a process, its stderr collected as it comes.
final class DFMocoProcess: @unchecked Sendable {
    let process: TestProcess
    let tracePath: String
    private let log: PipeCollector

    /// The pan/tilt rig: motor 1 pan (softLimits −85…85°, 90°/s, 180°/s²), motor 2 tilt
    /// (−40…45°, 60°/s, 120°/s²), 100 steps per degree.
    static let rigText = """
        {"name": "dfmoco test", "loopRateHz": 100, "output": {"type": "sim"},
         "axes": [
           {"name": "pan", "channel": 0, "pulseUs": [500, 2500], "angleDeg": [-90, 90], "softLimits": [-85, 85],
            "maxVelocity": 90, "maxAcceleration": 180, "park": 0},
           {"name": "tilt", "channel": 1, "pulseUs": [1000, 2000], "angleDeg": [-45, 45], "softLimits": [-40, 45],
            "maxVelocity": 60, "maxAcceleration": 120}
         ],
         "dfmoco": {"motors": ["pan", "tilt"], "stepsPerDegree": 100}}
        """

    /// Starts the server on `endpoint` arguments (`--listen 127.0.0.1:0` or `--serial PATH`).
    init(_ endpoint: [String]) throws {
        let rig = try RigProcess.temporaryFile("rig.json", contents: Self.rigText)
        tracePath = (rig as NSString).deletingLastPathComponent + "/trace.csv"
        let (process, _, err) = try RigProcess.start(["serve", "dfmoco", "--rig", rig, "--trace", tracePath, "--no-realtime"] + endpoint)
        self.process = process
        log = PipeCollector(err)
    }

    var stderr: String { log.text }

    /// Waits for a stderr line containing `text` and returns that line.
    @discardableResult
    func logLine(containing text: String, within seconds: Double = 15) throws -> String {
        if let line = log.line(containing: text, within: seconds) { return line }
        throw HarnessError("no log line with \"\(text)\" within \(seconds) s; stderr:\n\(log.text)")
    }

    /// The TCP port from the "serving … on tcp HOST:PORT" line.
    func port() throws -> UInt16 {
        let line = try logLine(containing: "dfmoco: serving")
        guard let range = line.range(of: #"tcp [0-9.]+:([0-9]+)"#, options: .regularExpression),
            let port = UInt16(line[range].split(separator: ":").last ?? "")
        else { throw HarnessError("no port in \(line)") }
        return port
    }

    /// SIGTERM (brake, park, safe state) and the exit status.
    func stop(within seconds: Double = 20) throws -> Int32 {
        if process.isRunning { kill(process.processIdentifier, SIGTERM) }
        guard process.wait(within: seconds) else {
            process.killAndWait()
            throw HarnessError("rig did not stop within \(seconds) s")
        }
        return process.terminationStatus
    }

    /// The pan and tilt positions per tick from the trace, with the tick times.
    func trace() throws -> (times: [Double], frames: [[Double]]) {
        let ticks = try Trace(path: tracePath).ticks(axes: ["pan", "tilt"])
        return (ticks.map(\.time), ticks.map(\.positions))
    }
}
