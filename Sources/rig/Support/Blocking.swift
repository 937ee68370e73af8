import Dispatch
import FoundationEssentials
import Glibc
import Synchronization

/// Runs async work (D-Bus, BlueZ) from a synchronous command and waits for its result.
/// The commands are synchronous `ParsableCommand`s; this is the one bridge they use.
func runBlocking<T: Sendable>(_ work: @escaping @Sendable () async throws -> T) throws -> T {
    let outcome = Mutex<Result<T, any Error>?>(nil)
    let done = DispatchSemaphore(value: 0)
    Task {
        do {
            let value = try await work()
            outcome.withLock { $0 = .success(value) }
        } catch {
            outcome.withLock { $0 = .failure(error) }
        }
        done.signal()
    }
    done.wait()
    guard let result = outcome.withLock({ $0 }) else { throw CancellationError() }
    return try result.get()
}
