import Dispatch
import FoundationEssentials
import Glibc
import Logging
import RigCore
import RigDFMoco
import RigFormat
import RigRuntime
import RigSyscall
import SystemPackage

#if canImport(Glibc)
    import Glibc
#endif

/// Speaks DFMoco to one Dragonframe at a time over TCP or a serial line, on a thread of
/// its own with `poll()`. Requests go through `DFMocoDevice`; its motion commands are
/// posted to the rig (`post`), and what the rig does is read back (`observe`, the control
/// loop's status). While a motor moves, an `mp` line for it goes out about every 100 ms,
/// and one more when it has stopped.
///
/// Safety: a client that disconnects (or a serial line that fails) brakes the rig to
/// rest; malformed input is logged and ignored, and never moves anything.
public final class DFMocoServer: @unchecked Sendable {
    public typealias Observe = @Sendable () -> DFMocoDevice.Observation

    public static let reportIntervalSeconds = 0.1
    /// Notes (malformed lines, clamped moves, go-motion) logged per second; more are
    /// counted and summarised, so a client flooding bad or out-of-range lines cannot flood
    /// the journal.
    static let notesLoggedPerSecond = 10

    public let endpoint: DFMocoEndpoint
    private let logger: Logger
    private let post: @Sendable (MotionCommand) -> Void
    private let observe: Observe
    // The server thread owns everything below once `start()` has run.
    private var device: DFMocoDevice
    private var listener: TCPListener?
    private var client: Client?
    private var streaming: [Bool]
    private var nextReport = 0.0
    private var noteWindow = (start: 0.0, logged: 0, suppressed: 0)
    private var serialRetryAt = 0.0
    private var wakeRead: Int32 = -1
    private var wakeWrite: Int32 = -1
    private let finished = DispatchSemaphore(value: 0)
    private var running = false

    private struct Client {
        var fd: FileDescriptor
        var name: String
        var isSocket: Bool
        var lines = DFMocoLineBuffer()
    }

    /// - Parameters:
    ///   - version: the rig's version, sent in the `hi` reply.
    ///   - post: hands a motion command to the rig (any thread; must not block).
    ///   - observe: what the rig is doing now.
    public init(
        rig: Rig, version: String, endpoint: DFMocoEndpoint, logger: Logger,
        post: @escaping @Sendable (MotionCommand) -> Void, observe: @escaping Observe
    ) {
        self.endpoint = endpoint
        self.logger = logger
        self.post = post
        self.observe = observe
        device = DFMocoDevice(rig: rig, version: version)
        streaming = [Bool](repeating: false, count: device.motorCount)
    }

    deinit {
        if wakeRead >= 0 { _ = Glibc.close(wakeRead) }
        if wakeWrite >= 0 { _ = Glibc.close(wakeWrite) }
    }

    /// The motors Dragonframe sees, in order: "1 tilt, 2 pan".
    public var motorSummary: String {
        device.map.axes.enumerated().map { "\($0.offset + 1) \(elided($0.element.name, maxCharacters: 40))" }.joined(separator: ", ")
    }

    /// The TCP port listened on (the one the system picked for port 0), once opened.
    public var port: UInt16? { listener?.port }

    /// Listens, or opens the serial line. Call before `start()`; a failure here leaves
    /// nothing running.
    public func open() throws(DFMocoEndpointError) {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { throw DFMocoEndpointError("pipe(): \(Errno(rawValue: errno))") }
        for fd in fds {
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        }
        wakeRead = fds[0]
        wakeWrite = fds[1]
        switch endpoint {
        case .tcp(let host, let port):
            listener = try TCPListener(host: host, port: port)
        case .serial(let path):
            client = Client(fd: try SerialPort.open(path), name: path, isSocket: false)
        }
    }

    /// Serves on a thread of its own until `stop()`.
    public func start() {
        running = true
        SystemThread.start(name: "rig-dfmoco") { [self] in
            serve()
            finished.signal()
        }
    }

    /// Ends the server thread, closes the connection and the listener. Idempotent.
    public func stop() {
        guard running else {
            closeAll()
            return
        }
        running = false
        var byte: UInt8 = 1
        _ = Glibc.write(wakeWrite, &byte, 1)
        finished.wait()
        closeAll()
    }

    private func closeAll() {
        if let client { try? client.fd.close() }
        client = nil
        if let listener { try? listener.fd.close() }
        listener = nil
    }

    // MARK: The server thread

    private func serve() {
        var fds: [pollfd] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        nextReport = now() + Self.reportIntervalSeconds
        while true {
            fds.removeAll(keepingCapacity: true)
            fds.append(pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0))
            if let listener { fds.append(pollfd(fd: listener.fd.rawValue, events: Int16(POLLIN), revents: 0)) }
            let clientSlot = fds.count
            if let client { fds.append(pollfd(fd: client.fd.rawValue, events: Int16(POLLIN), revents: 0)) }
            let waitMilliseconds = Int32(max(1, min(100, ((nextReport - now()) * 1000).rounded(.up))))
            if case .failure(let error) = Syscall.call({ poll(&fds, nfds_t(fds.count), waitMilliseconds) }) {
                logger.error("dfmoco: poll(): \(error); stopping the server")
                lost("the server failed")
                return
            }
            if fds[0].revents != 0 { return }
            if listener != nil, fds[1].revents != 0 { acceptClient() }
            if clientSlot < fds.count, fds[clientSlot].revents != 0 { readClient(&buffer, events: fds[clientSlot].revents) }
            let t = now()
            if t >= nextReport {
                nextReport = t + Self.reportIntervalSeconds
                report()
                flushNoteSummary(at: t)
            }
            reopenSerialIfDue(at: t)
        }
    }

    private func acceptClient() {
        guard let listener, let (fd, name) = listener.accept() else { return }
        if let client {
            logger.warning("dfmoco: refused a second connection from \(name): \(client.name) is connected (one client at a time)")
            try? fd.close()
            return
        }
        logger.notice("dfmoco: \(name) connected")
        client = Client(fd: fd, name: name, isSocket: true)
        for m in streaming.indices { streaming[m] = false }
    }

    private func readClient(_ buffer: inout [UInt8], events: Int16) {
        guard var current = client else { return }
        let read = buffer.withUnsafeMutableBytes { bytes in Syscall.call { Glibc.read(current.fd.rawValue, bytes.baseAddress, bytes.count) } }
        let (count, error): (Int, Int32) =
            switch read {
            case .success(let n): (n, 0)
            case .failure(let e): (-1, e.rawValue)
            }
        // Nothing to read yet, unless the line hung up (then poll would wake us at once, forever).
        let hungUp = events & Int16(POLLHUP | POLLERR) != 0
        if count < 0, error == EAGAIN, !hungUp { return }
        if count <= 0 {
            let why = count == 0 || error == EAGAIN ? "disconnected" : "failed: \(Errno(rawValue: error))"
            if current.isSocket {
                logger.notice("dfmoco: \(current.name) \(why)")
                try? current.fd.close()
                client = nil
                lost("the client left")
            } else {
                // A serial line that hangs up (a USB cable pulled): brake, and reopen it later.
                logger.warning("dfmoco: serial line \(current.name) \(why); reopening it every second")
                try? current.fd.close()
                client = nil
                serialRetryAt = now() + 1
                lost("the serial line failed")
            }
            return
        }
        let items = current.lines.append(buffer[0..<count])
        client = current
        for item in items {
            switch item {
            case .tooLong(let bytes):
                rejected(.lineTooLong(bytes: bytes))
            case .line(let line):
                switch DFMocoParser.parse(line, motorCount: device.motorCount) {
                case .failure(let rejection): rejected(rejection)
                case .success(let request): handle(request, line: line)
                }
            }
        }
    }

    private func handle(_ request: DFMocoRequest, line: [UInt8]) {
        logger.debug("dfmoco: ← \(DFMocoParser.printable(line))")
        let response = device.handle(request, observe())
        for command in response.commands { post(command) }
        for line in response.log { note("dfmoco: \(line)", level: .notice) }
        for reply in response.replies { send(reply) }
        if !response.commands.isEmpty {
            // Start the `mp` stream on the next round.
            nextReport = min(nextReport, now() + Self.reportIntervalSeconds)
        }
    }

    /// One `mp` per moving motor, and a last one as each stops.
    private func report() {
        guard client != nil else { return }
        let observed = observe()
        for m in streaming.indices {
            let moving = device.isMoving(motor: m, observed)
            if moving || streaming[m] { send(device.positionLine(motor: m, observed)) }
            streaming[m] = moving
        }
    }

    private func lost(_ why: String) {
        let response = device.disconnected()
        for command in response.commands { post(command) }
        logger.notice("dfmoco: \(why): braking to a stop")
        for m in streaming.indices { streaming[m] = false }
    }

    private func reopenSerialIfDue(at t: Double) {
        guard client == nil, case .serial(let path) = endpoint, t >= serialRetryAt else { return }
        serialRetryAt = t + 1
        if let fd = try? SerialPort.open(path) {
            logger.notice("dfmoco: serial line \(path) open again")
            client = Client(fd: fd, name: path, isSocket: false)
        }
    }

    private func send(_ line: String) {
        guard let client else { return }
        logger.debug("dfmoco: → \(line)")
        let bytes = Array((line + "\r\n").utf8)
        let written = bytes.withUnsafeBytes { p in
            client.isSocket
                ? Glibc.send(client.fd.rawValue, p.baseAddress, p.count, Int32(MSG_NOSIGNAL))
                : Glibc.write(client.fd.rawValue, p.baseAddress, p.count)
        }
        if written != bytes.count {
            // The client does not read (or has gone; the read side notices): drop the line
            // rather than block the server.
            logger.debug("dfmoco: could not send \"\(line)\" to \(client.name)")
        }
    }

    /// A malformed line: nothing moves, and the client hears `parse error`, as the
    /// reference firmware answers.
    private func rejected(_ rejection: DFMocoRejection) {
        note("dfmoco: ignored a line: \(rejection)", level: .warning)
        send("parse error")
    }

    /// Logs `text` unless this second's share of notes is used up (then counts it).
    private func note(_ text: String, level: Logger.Level) {
        let t = now()
        if t - noteWindow.start >= 1 { flushNoteSummary(at: t) }
        if noteWindow.logged < Self.notesLoggedPerSecond {
            noteWindow.logged += 1
            logger.log(level: level, "\(text)")
        } else {
            noteWindow.suppressed += 1
        }
    }

    private func flushNoteSummary(at t: Double) {
        guard t - noteWindow.start >= 1 else { return }
        if noteWindow.suppressed > 0 {
            logger.warning("dfmoco: \(noteWindow.suppressed) more notes (malformed lines, clamped moves) in the last second, not logged")
        }
        noteWindow = (t, 0, 0)
    }

    private func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}
