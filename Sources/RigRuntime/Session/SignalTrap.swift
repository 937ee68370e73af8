import CLinux
import FoundationEssentials
import Glibc
import Synchronization

/// The one signal trap of a running rig. SIGINT, SIGTERM, SIGHUP (the ssh session or
/// terminal closed), SIGPIPE (a reader of stdout went away) and SIGQUIT all ask for the
/// same controlled stop: brake within the limits, park, safe state. A second signal asks
/// for the safe state at once. SIGQUIT therefore never dumps core or prints a crash
/// backtrace while a rig runs.
///
/// The signals are caught from `main`'s first instruction (`installProcessWide`), not only
/// once a session runs: a signal that comes while a command that runs the rig is still
/// setting up (reading files, opening the camera) ends it there, with nothing moved
/// (`installProcessWide(runsRig:)`); one that comes while a session's trap is set stops that session,
/// even before its loop started. `cancel()` hands the signals back to that process-wide
/// rule. In a command that runs no rig, they keep their default meaning (SIGPIPE stays
/// ignored: every write goes through `StandardStreams`, which reports EPIPE).
public final class SignalTrap: @unchecked Sendable {
    /// The signals a run handles (all end it the same way).
    public static let signals: [Int32] = [SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGQUIT]

    private let registration: Int

    /// - Parameters:
    ///   - stop: the first signal, with its number.
    ///   - abort: any later one.
    public init(stop: @escaping @Sendable (Int32) -> Void, abort: @escaping @Sendable (Int32) -> Void) {
        ProcessSignals.shared.install()
        registration = ProcessSignals.shared.register { signo, n in
            if n == 1 { stop(signo) } else { abort(signo) }
        }
    }

    public func cancel() { ProcessSignals.shared.unregister(registration) }

    /// Catches the signals from here on (`main`'s first step; idempotent). `runsRig`: the
    /// command runs the rig (play, serve, jog), so a signal before its session's trap is
    /// set ends the command at once, nothing moved, exit 0 (the documented end of a
    /// signalled run); told before the arguments are even parsed.
    public static func installProcessWide(runsRig: Bool = false) {
        if runsRig { ProcessSignals.shared.setRunsSession() }
        ProcessSignals.shared.install()
    }

    /// "SIGTERM", "SIGHUP", … for messages.
    public static func name(_ signo: Int32) -> String {
        switch signo {
        case SIGINT: "SIGINT"
        case SIGTERM: "SIGTERM"
        case SIGHUP: "SIGHUP"
        case SIGPIPE: "SIGPIPE"
        case SIGQUIT: "SIGQUIT"
        default: "signal \(signo)"
        }
    }
}

/// The process's one signal handler and who it reports to: a session's trap, or the rule
/// for a signal that comes when none is set.
private final class ProcessSignals: @unchecked Sendable {
    static let shared = ProcessSignals()

    private let lock = Mutex<Void>(())
    private var installed = false
    private var handler: (id: Int, call: @Sendable (Int32, Int) -> Void)?
    private var delivered = 0
    private var nextID = 0
    private var runsSession = false
    /// A session's trap was set and cancelled: the run is over, only its report is left.
    private var sessionEnded = false

    /// Catches every signal of `SignalTrap.signals` at once (a C handler writes its number
    /// to a pipe; `rig-signals` reads it and delivers), so none is lost between here and
    /// a session's trap.
    func install() {
        lock.withLock { _ in
            guard !installed else { return }
            var fds: [Int32] = [-1, -1]
            guard pipe(&fds) == 0 else {
                // No pipe (out of descriptors): at least a reader that went away must not kill
                // the process mid-move; writes report EPIPE.
                signal(SIGPIPE, SIG_IGN)
                return
            }
            let readEnd = fds[0]
            for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
            // The handler must never block: a full pipe drops a byte (the signals are repeats).
            _ = fcntl(fds[1], F_SETFL, fcntl(fds[1], F_GETFL) | O_NONBLOCK)
            installed = true
            // A parent that blocks them (a test runner, a supervisor) passes its mask on: a
            // blocked signal never reaches the handler. Threads started from here (the reader
            // below included) inherit this.
            var set = sigset_t()
            sigemptyset(&set)
            for signo in SignalTrap.signals { sigaddset(&set, signo) }
            pthread_sigmask(SIG_UNBLOCK, &set, nil)
            SystemThread.start(name: "rig-signals") { [self] in
                var byte: UInt8 = 0
                while true {
                    let n = read(readEnd, &byte, 1)
                    if n == 1 {
                        deliver(Int32(byte))
                    } else if n < 0, errno == EINTR {
                        continue
                    } else {
                        return
                    }
                }
            }
            for signo in SignalTrap.signals { _ = rig_signal_forward(fds[1], signo) }
        }
    }

    func register(_ call: @escaping @Sendable (Int32, Int) -> Void) -> Int {
        return lock.withLock { _ in
            nextID += 1
            handler = (nextID, call)
            delivered = 0
            return nextID
        }
    }

    func unregister(_ id: Int) {
        lock.withLock { _ in
            if handler?.id == id {
                handler = nil
                sessionEnded = true
            }
        }
    }

    func setRunsSession() {
        lock.withLock { _ in
            runsSession = true
        }
    }

    private func deliver(_ signo: Int32) {
        let (call, n, session, ended) = lock.withLock { _ in
            let call = handler?.call
            if call != nil { delivered += 1 }
            return (call, delivered, runsSession, sessionEnded)
        }
        if let call {
            call(signo, n)
        } else if session {
            // Nothing has moved, and no output was started (or the run is over, safe):
            // ending here is the whole stop.
            if !ended { _ = StandardStreams.err("rig: stopped by \(SignalTrap.name(signo)) before anything moved\n") }
            _exit(0)
        } else if signo != SIGPIPE {
            // A command that runs no rig: the signal's usual end (SIGPIPE stays ignored).
            _exit(128 + signo)
        }
    }
}
