import Synchronization

/// What the operator asks of a running `ConsoleSource` besides motion commands: programs
/// and their steps. Applied at the start of a loop tick.
public enum ConsoleRequest: Sendable, Equatable {
    /// Play a program (already checked by the caller). Refused (counted in
    /// `ConsoleSource.refusedRequests`) unless the rig is at rest with no program.
    case play(ConsoleProgram)
    /// Go on from the step the program waits at (or as soon as it is ready).
    case next
    /// Move back to the previous step and wait there; only while waiting at a step.
    case back
    /// Shoot the current step again where the rig stands (it becomes ready once more);
    /// only while waiting.
    case redo
    /// Stepped programs: stop advancing by themselves after the current step.
    case pause
    case resume
    /// Brake, park, and go back to taking motion commands.
    case stop
}

/// Any thread posts; the loop thread drains at the start of every tick. Separate from
/// `CommandInbox` because a request may carry a whole program, which a `MotionCommand`
/// (shared with jog and DFMoco) has no room for. Unbounded but tiny: requests come from
/// operator actions, not from a stream.
public final class ConsoleInbox: Sendable {
    private let pending = Mutex<[ConsoleRequest]>([])

    public init() {}

    public func post(_ request: ConsoleRequest) {
        pending.withLock { $0.append(request) }
    }

    /// Moves every queued request, oldest first, into `buffer` (which must be empty).
    func drain(into buffer: inout [ConsoleRequest]) {
        pending.withLock { p in
            guard !p.isEmpty else { return }
            swap(&p, &buffer)
        }
    }
}
