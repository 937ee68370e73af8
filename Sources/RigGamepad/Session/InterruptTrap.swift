import Dispatch
import Glibc

/// SIGINT/SIGTERM while a session runs: the first asks for a stop (brake, safe state),
/// a second one for an abort. Restores the default handlers when cancelled.
final class InterruptTrap: @unchecked Sendable {
    private var sources: [any DispatchSourceSignal] = []

    init(onStop: @escaping @Sendable () -> Void, onAbort: @escaping @Sendable () -> Void) {
        let count = Count()
        for signo in [SIGINT, SIGTERM] {
            signal(signo, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signo, queue: .global())
            source.setEventHandler {
                if count.next() == 1 { onStop() } else { onAbort() }
            }
            source.resume()
            sources.append(source)
        }
    }

    func cancel() {
        for source in sources { source.cancel() }
        sources = []
        signal(SIGINT, SIG_DFL)
        signal(SIGTERM, SIG_DFL)
    }

    private final class Count: @unchecked Sendable {
        private var value = 0
        private let lock = DispatchQueue(label: "rig.interrupts")
        func next() -> Int { lock.sync { value += 1; return value } }
    }
}
