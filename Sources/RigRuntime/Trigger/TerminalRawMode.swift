import FoundationEssentials
import Glibc
import Synchronization

/// The terminal in raw-ish mode for key-by-key input: no line buffering, no echo.
/// Signals stay on (Ctrl-C is still SIGINT, handled as a stop). `restore()` puts the
/// saved settings back; it runs on every way out (explicitly, and in `deinit`). Sendable:
/// the thread reading keys and the one stopping the session may both restore.
public final class TerminalRawMode: @unchecked Sendable {
    private let fd: Int32
    private var saved = termios()
    private var active = false
    private let lock = Mutex<Void>(())

    /// Switches `fd` (stdin) to raw mode; nil if it is not a terminal.
    public init?(fd: Int32 = STDIN_FILENO) {
        self.fd = fd
        guard isatty(fd) == 1, tcgetattr(fd, &saved) == 0 else { return nil }
        var raw = saved
        raw.c_lflag &= ~tcflag_t(ICANON | ECHO)
        raw.c_iflag &= ~tcflag_t(IXON | ICRNL)
        withUnsafeMutableBytes(of: &raw.c_cc) { cc in
            cc[Int(VMIN)] = 0
            cc[Int(VTIME)] = 0
        }
        guard tcsetattr(fd, TCSANOW, &raw) == 0 else { return nil }
        active = true
    }

    public func restore() {
        lock.withLock { _ in
            guard active else { return }
            active = false
            _ = tcsetattr(fd, TCSANOW, &saved)
        }
    }

    deinit { restore() }
}

extension TerminalRawMode {
    /// Reads single bytes from stdin until `stopped()` or the terminal closes, polling every
    /// 100 ms so a stop ends the reading thread.
    public static func readKeys(until stopped: () -> Bool, _ key: (UInt8) -> Void) {
        var byte: UInt8 = 0
        while !stopped() {
            var fds = pollfd(fd: STDIN_FILENO, events: Int16(POLLIN), revents: 0)
            guard poll(&fds, 1, 100) > 0 else { continue }
            guard read(STDIN_FILENO, &byte, 1) == 1 else { return }
            key(byte)
        }
    }
}
