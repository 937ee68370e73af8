import Dispatch
import FoundationEssentials
import Glibc
import RigRuntime
import Synchronization

/// Threads that spin on a CPU until stopped: the "other work" `rig bench loop --load N`
/// runs the loops under. They run at normal priority, as a user's other programs would.
final class BusyLoad: Sendable {
    private let stopRequested = Atomic<Bool>(false)
    private let running = DispatchGroup()
    let threads: Int

    /// Starts `threads` spinning threads at once.
    init(threads: Int) {
        self.threads = threads
        for i in 0..<threads {
            running.enter()
            SystemThread.start(name: "rig-bench-load-\(i)") { [self] in
                var spins: UInt64 = 0
                while !stopRequested.load(ordering: .relaxed) { spins &+= 1 }
                // Keep the counter observable so the loop is not optimized away.
                if spins == .max { print(spins) }
                running.leave()
            }
        }
    }

    /// Stops every thread and waits for them to end.
    func stop() {
        stopRequested.store(true, ordering: .relaxed)
        running.wait()
    }
}
