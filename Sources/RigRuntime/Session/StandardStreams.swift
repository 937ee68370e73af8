import Glibc
import RigSyscall
import Synchronization

/// A write to stdout or stderr that failed: the reader went away, the disk is full, the
/// descriptor was closed.
public struct StreamFailure: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Stream: String, Sendable { case stdout, stderr }
    public var stream: Stream
    public var errno: Int32

    /// The reader closed the pipe (`rig play … | head -2`): an ordinary end, like SIGPIPE.
    public var isBrokenPipe: Bool { errno == EPIPE }

    public var description: String {
        "writing to \(stream.rawValue) failed: \(String(cString: strerror(errno)))"
    }
}

/// The one way the program writes to stdout and stderr: plain `write(2)`, never a
/// `FileHandle.write` that traps on a closed pipe, a full disk or a closed descriptor.
/// The first failure is kept and reported to the handler a running session installs, so
/// the session brakes, parks and goes to the safe state instead of dying at speed.
/// Later writes to a failed stream are dropped.
public enum StandardStreams {
    private struct State {
        var failure: StreamFailure?
        var failed: Set<StreamFailure.Stream> = []
        var onFailure: (@Sendable (StreamFailure) -> Void)?
    }

    private static let state = Mutex(State())

    /// Writes `text` to stdout. Returns false if it failed (now or before).
    @discardableResult
    public static func out(_ text: String) -> Bool { write(text, to: .stdout) }

    /// Writes `text` to stderr. Returns false if it failed (now or before).
    @discardableResult
    public static func err(_ text: String) -> Bool { write(text, to: .stderr) }

    /// Holds the place of a standard descriptor the process was started without
    /// (`rig play >&-`): the next file opened (the rig file, the trace, libdispatch's own
    /// descriptors) would take its number, and stdout's lines would land in it. A
    /// read-only /dev/null keeps the number, and a write to it still fails (EBADF), so the
    /// closed stream is reported as before. `main`'s first step.
    public static func holdClosedDescriptors() {
        for fd in [STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO] where fcntl(fd, F_GETFD) == -1 && Glibc.errno == EBADF {
            let held = open("/dev/null", O_RDONLY)
            // Opened on the lowest free number, which is `fd` (the ones below are open).
            if held >= 0, held != fd { close(held) }
        }
    }

    /// The first failure, if any.
    public static var failure: StreamFailure? { state.withLock { $0.failure } }

    /// Called once, on the writing thread, with the first failure (and at once if one
    /// happened before). nil removes the handler.
    public static func onFailure(_ handler: (@Sendable (StreamFailure) -> Void)?) {
        let earlier: StreamFailure? = state.withLock { s in
            s.onFailure = handler
            return s.failure
        }
        if let earlier, let handler { handler(earlier) }
    }

    private static func write(_ text: String, to stream: StreamFailure.Stream) -> Bool {
        if state.withLock({ $0.failed.contains(stream) }) { return false }
        let fd = stream == .stdout ? STDOUT_FILENO : STDERR_FILENO
        var error: Int32 = 0
        var bytes = Array(text.utf8)
        bytes.withUnsafeMutableBytes { buffer in
            guard let base = buffer.baseAddress else { return }
            var offset = 0
            while offset < buffer.count {
                switch Syscall.call({ Glibc.write(fd, base + offset, buffer.count - offset) }) {
                case .success(let n) where n > 0:
                    offset += n
                case .failure(.resourceTemporarilyUnavailable):
                    // A non-blocking terminal or pipe that is full: wait for room.
                    var p = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                    _ = Syscall.call { poll(&p, 1, 1000) }
                case .failure(let failure):
                    error = failure.rawValue
                    return
                case .success:
                    error = EIO
                    return
                }
            }
        }
        guard error != 0 else { return true }
        let failure = StreamFailure(stream: stream, errno: error)
        let handler: (@Sendable (StreamFailure) -> Void)? = state.withLock { s in
            s.failed.insert(stream)
            guard s.failure == nil else { return nil }
            s.failure = failure
            return s.onFailure
        }
        handler?(failure)
        return false
    }
}

/// stderr through `StandardStreams`, for swift-log's `StreamLogHandler(label:stream:)`: a
/// failed log write stops a run like any other failed write instead of going unnoticed.
public struct StandardErrorStream: TextOutputStream, Sendable {
    public init() {}
    public mutating func write(_ string: String) { StandardStreams.err(string) }
}
