import Synchronization

/// Any thread posts; the loop thread drains it at the start of every tick. Bounded (drop oldest
/// jog when full, never block the poster).
///
/// A poster only ever holds the lock for an append, so the loop thread never waits long;
/// `drain(into:)` swaps buffers, so draining does not allocate once both have grown.
public final class CommandInbox: Sendable {
    /// Commands held at most; a jog stream at the loop rate never comes near it.
    public let capacity: Int

    private struct State {
        var pending: [MotionCommand]
        var dropped = 0
    }

    private let state: Mutex<State>

    public init() {
        self.capacity = 64
        state = Mutex(State(pending: Self.buffer(capacity: 64)))
    }

    /// - Parameter capacity: commands held before the oldest jog (or, with no jog queued,
    ///   the oldest command) is dropped; at least 1.
    public init(capacity: Int) {
        self.capacity = max(1, capacity)
        state = Mutex(State(pending: Self.buffer(capacity: max(1, capacity))))
    }

    /// Queues `command` for the next tick. Never blocks for room: when the inbox is full the
    /// oldest `.jog` goes (a later jog supersedes it), or, if none is queued, the oldest
    /// command that is not a `.halt`; a halt is dropped only when nothing but halts is queued.
    public func post(_ command: MotionCommand) {
        state.withLock { s in
            if s.pending.count >= capacity {
                let victim =
                    s.pending.firstIndex { if case .jog = $0 { true } else { false } }
                    ?? s.pending.firstIndex { $0 != .halt }
                    ?? 0
                s.pending.remove(at: victim)
                s.dropped += 1
            }
            s.pending.append(command)
        }
    }

    /// Commands dropped because the inbox was full.
    public var droppedCount: Int { state.withLock { $0.dropped } }

    /// Moves every queued command, oldest first, into `buffer` (which must be empty) by
    /// swapping storage. For the loop thread.
    public func drain(into buffer: inout [MotionCommand]) {
        state.withLock { s in
            guard !s.pending.isEmpty else { return }
            swap(&s.pending, &buffer)
        }
    }

    static func buffer(capacity: Int) -> [MotionCommand] {
        var b: [MotionCommand] = []
        b.reserveCapacity(capacity + 1)
        return b
    }
}
