import Foundation

/// The one signal trap of a running rig. SIGINT, SIGTERM, SIGHUP (the ssh session or
/// terminal closed), SIGPIPE (a reader of stdout went away) and SIGQUIT all ask for the
/// same controlled stop: brake within the limits, park, safe state. A second signal asks
/// for the safe state at once. SIGQUIT therefore never dumps core or prints a crash
/// backtrace while a rig runs. `cancel()` restores the default handlers (SIGPIPE stays
/// ignored: every write goes through `StandardStreams`, which reports EPIPE).
public final class SignalTrap: @unchecked Sendable {
    /// The signals a run handles (all end it the same way).
    public static let signals: [Int32] = [SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGQUIT]

    private var sources: [any DispatchSourceSignal] = []
    private let lock = NSLock()
    private var count = 0

    /// - Parameters:
    ///   - stop: the first signal, with its number.
    ///   - abort: any later one.
    public init(stop: @escaping @Sendable (Int32) -> Void, abort: @escaping @Sendable (Int32) -> Void) {
        for signo in Self.signals {
            // Ignored, so that the default action (die; for SIGQUIT, the runtime's crash
            // handler) never runs and a write to a closed pipe fails with EPIPE instead.
            signal(signo, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signo, queue: .global())
            source.setEventHandler { [self] in
                lock.lock()
                count += 1
                let n = count
                lock.unlock()
                if n == 1 { stop(signo) } else { abort(signo) }
            }
            source.resume()
            sources.append(source)
        }
    }

    public func cancel() {
        for source in sources { source.cancel() }
        sources.removeAll()
        // SIGPIPE stays ignored: a reader that went away must not kill the process while
        // it reports how the run ended (and a SIGPIPE still pending when the signal source
        // lets go of it would otherwise do just that).
        for signo in Self.signals where signo != SIGPIPE { signal(signo, SIG_DFL) }
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
