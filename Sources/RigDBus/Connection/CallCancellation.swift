import Synchronization

/// Links a Swift task's cancellation to one pending call on the bus thread: whichever of
/// "the call started" and "the task was cancelled" comes second abandons the call.
final class CallCancellation: Sendable {
    private struct State {
        var callID: UInt64?
        var cancelled = false
    }

    private let state = Mutex(State())

    /// Bus thread: the call is pending under `id`. Returns false if the task was already
    /// cancelled (the caller then abandons the call itself).
    func started(_ id: UInt64) -> Bool {
        state.withLock { state in
            state.callID = id
            return !state.cancelled
        }
    }

    var isCancelled: Bool { state.withLock { $0.cancelled } }

    /// Any thread: the task was cancelled. Returns the pending call to abandon, if it started.
    func cancel() -> UInt64? {
        state.withLock { state in
            state.cancelled = true
            return state.callID
        }
    }
}
