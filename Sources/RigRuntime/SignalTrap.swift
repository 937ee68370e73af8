import Foundation

/// Catches SIGINT and SIGTERM while a rig runs: the first asks for a controlled stop,
/// a second one for the safe state at once. Restores the default handlers on `cancel()`.
public final class SignalTrap: @unchecked Sendable {
    private var sources: [DispatchSourceSignal] = []
    private let lock = NSLock()
    private var count = 0

    public init(stop: @escaping @Sendable () -> Void, abort: @escaping @Sendable () -> Void) {
        for sig in [SIGINT, SIGTERM] {
            signal(sig, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            source.setEventHandler { [self] in
                lock.lock()
                count += 1
                let n = count
                lock.unlock()
                if n == 1 { stop() } else { abort() }
            }
            source.resume()
            sources.append(source)
        }
    }

    public func cancel() {
        for source in sources { source.cancel() }
        sources.removeAll()
        signal(SIGINT, SIG_DFL)
        signal(SIGTERM, SIG_DFL)
    }
}
