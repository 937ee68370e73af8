import FoundationEssentials
import Glibc
import Synchronization

/// One press per ready step, for triggers a person presses (Enter, a button): a press
/// while the rig is ready advances it; a press while it is still moving is kept — one at
/// most — and advances it the moment it is ready, so pressing twice never skips a step.
public final class AdvanceGate: @unchecked Sendable {
    private let lock = Mutex<Void>(())
    private var waiting = false
    private var queued = false
    private var advance: (@Sendable () -> Void)?

    public init() {}

    public func start(advance: @escaping @Sendable () -> Void) {
        lock.withLock { _ in self.advance = advance }
    }

    /// The rig is ready at a step. Returns true if a kept press advanced it at once
    /// (false: it now waits for a press).
    @discardableResult
    public func ready() -> Bool {
        lock.withLock { _ in
            if queued {
                queued = false
                advance?()
                return true
            }
            waiting = true
            return false
        }
    }

    /// A press. Returns true if it advanced the rig now (false: kept for later, or no-op).
    @discardableResult
    public func press() -> Bool {
        lock.withLock { _ in
            guard waiting else {
                queued = true
                return false
            }
            waiting = false
            advance?()
            return true
        }
    }

    /// The rig leaves the step without a press (redo, go to): forget the wait and any
    /// kept press, so the next press counts for the next ready step.
    public func reset() {
        lock.withLock { _ in
            waiting = false
            queued = false
        }
    }

    public func stop() {
        lock.withLock { _ in advance = nil }
    }

    /// Started and not stopped.
    public var isRunning: Bool { lock.withLock { _ in advance != nil } }
}
