import Foundation

/// Runs blocking work (an output's start, a loop, a wait on child processes) on a thread of
/// its own, not the test's cooperative pool: on 2 cores that pool has 2 threads, and a test
/// that blocks one for long starves every other async test (and the output's own tasks).
///
/// The work stays in the calling task (a task executor preference, not a detached thread),
/// so its task locals come with it: an `#expect` inside is recorded against the test that
/// called, not as an issue of an «unknown» test.
public func onThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    let executor = ThreadExecutor()
    defer { executor.finish() }
    return try await withTaskExecutorPreference(executor) { try body() }
}

/// A task executor with threads of its own (one for `onThread`; a few shared ones for the
/// suites that block: `BlockingTests.executor`): they run the jobs given to it in order
/// until it is finished.
public final class ThreadExecutor: TaskExecutor, @unchecked Sendable {
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var finished = false
    private var alive = 0

    public init(threads: Int = 1) {
        condition.withLock { alive = max(1, threads) }
        for _ in 0..<max(1, threads) { startThread() }
    }

    private func startThread() {
        let thread = Thread { [self] in run() }
        thread.stackSize = 1 << 20
        thread.start()
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let revive = condition.withLock { () -> Bool in
            jobs.append(job)
            condition.signal()
            // A job after the threads ended (a Task the work started, which inherits the
            // preference): a thread again, so it still runs.
            guard alive == 0 else { return false }
            alive = 1
            return true
        }
        if revive { startThread() }
    }

    /// Lets the threads end once the jobs given so far have run.
    public func finish() {
        condition.withLock {
            finished = true
            condition.broadcast()
        }
    }

    private func run() {
        while true {
            condition.lock()
            while jobs.isEmpty && !finished { condition.wait() }
            if jobs.isEmpty {
                alive -= 1
                condition.unlock()
                return
            }
            let job = jobs.removeFirst()
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}

/// Where tests that block a thread for seconds at a time (a `rig` process run to its end,
/// synchronously) run: 3 threads of their own, so that the cooperative pool's 2 threads on
/// a 2-core machine stay free for the async tests' waits and deadlines. Without it, a full
/// run queued hundreds of such tests on those 2 threads, and async tests missed their
/// deadlines or their time limits by minutes (their next step waited for a thread).
public enum BlockingTests {
    public static let executor = ThreadExecutor(threads: 3)
}
