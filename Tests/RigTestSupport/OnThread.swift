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

/// A task executor with one thread of its own, for `onThread`: it runs the jobs given to
/// it in order until it is finished.
final class ThreadExecutor: TaskExecutor, @unchecked Sendable {
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var finished = false

    init() {
        let thread = Thread { [self] in run() }
        thread.stackSize = 1 << 20
        thread.start()
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.withLock {
            jobs.append(job)
            condition.signal()
        }
    }

    /// Lets the thread end once the jobs given so far have run.
    func finish() {
        condition.withLock {
            finished = true
            condition.signal()
        }
    }

    private func run() {
        while true {
            condition.lock()
            while jobs.isEmpty && !finished { condition.wait() }
            if jobs.isEmpty {
                condition.unlock()
                return
            }
            let job = jobs.removeFirst()
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}
