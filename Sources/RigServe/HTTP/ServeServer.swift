import Dispatch
import FoundationEssentials
import Glibc
import Hummingbird
import Logging
import ServiceLifecycle
import Synchronization

/// The HTTP server on Swift concurrency, for a synchronous caller (`rig serve`): started
/// in the background, stopped when the rig's session ends.
public final class ServeServer: @unchecked Sendable {
    private let parts: ServeApp.Parts
    private let logger: Logger
    private let onServerRunning: @Sendable (Int) async -> Void
    private var task: Task<Void, Never>?
    private var group: ServiceGroup?
    private let done = DispatchSemaphore(value: 0)
    private let lock = Mutex<Void>(())
    private var failure: Error?

    /// - Parameter onServerRunning: called with the port once the server listens.
    public init(_ parts: ServeApp.Parts, logger: Logger, onServerRunning: @escaping @Sendable (Int) async -> Void) {
        self.parts = parts
        self.logger = logger
        self.onServerRunning = onServerRunning
    }

    /// Why the server stopped by itself (a port in use, …), if it did.
    public var error: Error? { lock.withLock { _ in failure } }

    public func start() {
        let app = ServeApp.application(parts, logger: logger, onServerRunning: onServerRunning)
        // The session owns the signals (it parks first); the server stops when it ends.
        let group = ServiceGroup(configuration: .init(services: [app], gracefulShutdownSignals: [], logger: logger))
        lock.withLock { _ in self.group = group }
        task = Task { [self] in
            do {
                try await group.run()
            } catch {
                lock.withLock { _ in failure = error }
                // Without its server the rig has no operator: park it.
                parts.console.requestShutdown()
            }
            done.signal()
        }
    }

    /// Stops the server gracefully (open event streams end once the session has) and waits.
    public func stopAndWait() {
        guard let group = lock.withLock({ _ in self.group }) else { return }
        Task { await group.triggerGracefulShutdown() }
        done.wait()
    }
}
