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
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("rig-bench-serve-\(getpid())").path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let rig =
            #"{"name": "bench head", "loopRateHz": 100, "output": {"type": "sim"}, "axes": [{"name": "pan", "channel": 0}, {"name": "tilt", "channel": 1}]}"#
        // Ten minutes of slow sweeps: the status changes every tick the whole time.
        let keys = (0...60).map { #"{"t": \#($0 * 10), "value": \#($0 % 2 == 0 ? -60 : 60)}"# }.joined(separator: ",")
        let server: BenchServe
        do {
            server = try BenchServe(
                executable: self.server ?? runningExecutablePath(), directory: dir, rig: rig,
                programs: ["sweep.json": #"{"rig": "rig.json", "kind": "keyframes", "keyframes": {"pan": [\#(keys)]}}"#],
                arguments: ["--max-connections", String((counts.max() ?? 1) + 16)])
        } catch {
            printError("error: \(error)")
            throw ExitCode(1)
        }
        defer { server.stop() }
        let port = server.port
        guard server.request("POST /api/play", body: #"{"program": "sweep.json"}"#).hasPrefix("HTTP/1.1 202") else {
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
            let before = server.child.cpuSeconds
            let start = Date()
            Self.drain(streams, seconds: seconds, received: &received)
            let cpu = (server.child.cpuSeconds - before) / Date().timeIntervalSince(start)
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

    private static func openStream(port: Int, id: Int) -> Int32? {
        guard let fd = try? LoopbackTCP.connect(port: port).get() else { return nil }
        guard BenchServe.send(fd, "GET /api/events HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nX-Rig-Client: bench \(id)\r\n\r\n") else {
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
