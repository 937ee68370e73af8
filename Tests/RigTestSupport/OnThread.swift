import Foundation

/// Runs blocking work (an output's start, a loop, a wait on child processes) on a thread of
/// its own, not the test's cooperative pool: on 2 cores that pool has 2 threads, and a test
/// that blocks one for long starves every other async test (and the output's own tasks).
public func onThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread {
            do { continuation.resume(returning: try body()) } catch { continuation.resume(throwing: error) }
        }
        thread.stackSize = 1 << 20
        thread.start()
    }
}
