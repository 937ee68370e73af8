import ArgumentParser
import FoundationEssentials
import Glibc
import RigCore
import RigFormat
import RigRuntime
import SystemPackage

/// `rig bench serve`: what the phone page's event streams cost the server.
struct BenchServeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Measure rig serve's CPU while a program plays and N clients follow /api/events.",
        discussion: """
            Starts `rig serve` on the simulated pan/tilt head (a loopback listener, no real-time \
            scheduling), plays a long keyframed move, and for each client count opens that many \
            event streams and reads them; the server's CPU time (user + system, from /proc) over \
            --seconds is reported as a share of one core, with the bytes each client received.
            """
    )

    @Option(help: ArgumentHelp("Client counts, comma-separated.", valueName: "n,n,…")) var clients = "1,50,200"
    @Option(help: ArgumentHelp("Seconds measured per client count.", valueName: "s")) var seconds = 10.0
    @Flag(help: "Print the figures as JSON.") var json = false
    @Option(help: ArgumentHelp("The rig binary to run as the server (default: this one), to compare builds.", valueName: "path"))
    var server: String?

    func validate() throws {
        guard (2...120).contains(seconds) else { throw ValidationError("--seconds: valid: 2…120") }
        guard !counts.isEmpty, counts.allSatisfy({ (1...1000).contains($0) }) else { throw ValidationError("--clients: counts of 1…1000") }
    }

    private var counts: [Int] { clients.split(separator: ",").compactMap { Int($0.trimmed()) } }

    func run() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("rig-bench-serve-\(getpid())")
        defer { try? FileManager.default.removeItem(at: dir) }
        let programs = dir.appendingPathComponent("programs")
        try FileManager.default.createDirectory(at: programs, withIntermediateDirectories: true)
        let rig =
            #"{"name": "bench head", "loopRateHz": 100, "output": {"type": "sim"}, "axes": [{"name": "pan", "channel": 0}, {"name": "tilt", "channel": 1}]}"#
        try rig.write(to: dir.appendingPathComponent("rig.json"), atomically: true, encoding: .utf8)
        // Ten minutes of slow sweeps: the status changes every tick the whole time.
        let keys = (0...60).map { #"{"t": \#($0 * 10), "value": \#($0 % 2 == 0 ? -60 : 60)}"# }.joined(separator: ",")
        try #"{"rig": "rig.json", "kind": "keyframes", "keyframes": {"pan": [\#(keys)]}}"#.write(
            to: programs.appendingPathComponent("sweep.json"), atomically: true, encoding: .utf8)

        var environment = ProcessInfo.processInfo.environment
        environment["XDG_STATE_HOME"] = dir.appendingPathComponent("state").path
        // Stdout and stderr into one pipe, read while it runs; stopped with SIGINT (it parks).
        let server = try BenchChild(
            self.server ?? runningExecutablePath(),
            [
                "serve", "--rig", dir.appendingPathComponent("rig.json").path, "--programs", programs.path, "--listen", "127.0.0.1:0",
                "--no-realtime", "--max-connections", String((counts.max() ?? 1) + 16),
            ], environment: environment, output: .pipe)
        defer { server.stop(SIGINT, within: 60) }
        guard let output = server.pipe, let port = Self.port(from: output, within: 60) else {
            printError("error: rig serve did not say where it listens")
            throw ExitCode(1)
        }
        guard Self.request(port: port, "POST /api/play", body: #"{"program": "sweep.json"}"#).hasPrefix("HTTP/1.1 202") else {
            printError("error: rig serve did not start the benchmark program")
            throw ExitCode(1)
        }
        var rows: [(clients: Int, cpu: Double, bytesPerClient: Double)] = []
        for n in counts {
            let streams = (0..<n).compactMap { Self.openStream(port: port, id: $0) }
            guard streams.count == n else {
                printError("error: opened \(streams.count) of \(n) event streams")
                throw ExitCode(1)
            }
            var received = 0
            Self.drain(streams, seconds: 1, received: &received)  // every stream has its first status
            received = 0
            let before = server.cpuSeconds
            let start = Date()
            Self.drain(streams, seconds: seconds, received: &received)
            let cpu = (server.cpuSeconds - before) / Date().timeIntervalSince(start)
            for fd in streams { close(fd) }
            rows.append((n, cpu, Double(received) / Double(n)))
            if !json {
                print(
                    "\(String(n).leftPadded(to: 4)) clients: \(percent(cpu, digits: 1)) of a core, \(Int(Double(received) / Double(n) / seconds)) B/s per client"
                )
            }
        }
        if json {
            print(
                "["
                    + rows.map {
                        #"{"clients": \#($0.clients), "cpuShareOfCore": \#(fixed($0.cpu, 4)), "bytesPerClientPerSecond": \#(Int($0.bytesPerClient / seconds))}"#
                    }.joined(separator: ", ") + "]")
        }
    }

    /// The port from "listening on http://127.0.0.1:PORT/".
    private static func port(from output: FileDescriptor, within seconds: Double) -> Int? {
        var text = ""
        let deadline = Date().addingTimeInterval(seconds)
        var buffer = [UInt8](repeating: 0, count: 4096)
        while Date() < deadline {
            guard let n = try? buffer.withUnsafeMutableBytes({ try output.read(into: $0, retryOnInterrupt: true) }), n > 0 else { return nil }
            text += String(decoding: buffer.prefix(n), as: UTF8.self)
            if let range = text.firstRange(of: "listening on http://127.0.0.1:") {
                let digits = text[range.upperBound...].prefix { $0.isNumber }
                if let port = Int(digits), text[range.upperBound...].dropFirst(digits.count).first == "/" {
                    // Keep reading its log in the background so the pipe never fills.
                    SystemThread.start(name: "rig-bench-drain") {
                        var sink = [UInt8](repeating: 0, count: 4096)
                        while let n = try? sink.withUnsafeMutableBytes({ try output.read(into: $0, retryOnInterrupt: true) }), n > 0 {}
                    }
                    return port
                }
            }
        }
        return nil
    }

    private static func connect(port: Int) -> Int32? {
        try? LoopbackTCP.connect(port: port).get()
    }

    private static func send(_ fd: Int32, _ text: String) -> Bool {
        let bytes = Array(text.utf8)
        return bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) } == bytes.count
    }

    /// One request and the start of its reply.
    private static func request(port: Int, _ line: String, body: String) -> String {
        guard let fd = connect(port: port) else { return "" }
        defer { close(fd) }
        let request =
            "\(line) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nX-Rig-Client: bench\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)"
        guard send(fd, request) else { return "" }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let n = read(fd, &buffer, buffer.count)
        return n > 0 ? String(decoding: buffer[..<n], as: UTF8.self) : ""
    }

    private static func openStream(port: Int, id: Int) -> Int32? {
        guard let fd = connect(port: port) else { return nil }
        guard send(fd, "GET /api/events HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nX-Rig-Client: bench \(id)\r\n\r\n") else {
            close(fd)
            return nil
        }
        return fd
    }

    /// Reads every stream for `seconds`, as a page would.
    private static func drain(_ fds: [Int32], seconds: Double, received: inout Int) {
        var polls = fds.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        var buffer = [UInt8](repeating: 0, count: 65536)
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            guard poll(&polls, nfds_t(polls.count), 100) > 0 else { continue }
            for i in polls.indices where polls[i].revents & Int16(POLLIN) != 0 {
                let n = read(polls[i].fd, &buffer, buffer.count)
                if n > 0 { received += n }
            }
        }
    }
}
