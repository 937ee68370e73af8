import Synchronization

/// Everything another thread asks of the loop's motion source, typed: a motion command
/// (jog, move, halt), a program request (play, next, back, …), and the trigger's and the
/// camera's controls (advance, shot done, redo, go to a step, home).
public enum SourceRequest: Sendable, Equatable {
    case motion(MotionCommand)
    case program(ProgramRequest)
    /// A step trigger fired (Enter, Cascable, a GPIO button): go on from this step's wait,
    /// or, if the rig is still moving or settling, as soon as it is ready (kept, never
    /// refused). Not the operator's `ProgramRequest.next`, which counts only during a wait,
    /// once.
    case advance
    /// The camera finished the shot the source asked for.
    case shotDone
    /// Shoot the current step again.
    case redo
    /// Go to step `step` (0-based) and shoot it.
    case goTo(step: Int)
    /// Go to the rig's home pose between steps.
    case goHome
    /// Rejoin a group's keyframes path part-way (see `Player.rejoin(pathSeconds:framesShot:)`).
    case rejoin(pathSeconds: Double, framesShot: Int?)
}

/// The one mailbox into the control loop: any thread posts; the loop thread hands what
/// came, oldest first, to its source at the start of every tick (`deliver(to:)`). Stop and
/// abort are flags beside the queue, never dropped and never waiting behind it.
///
/// Bounded, never blocking a poster: when it is full the oldest `.jog` goes (a later jog
/// supersedes it), or, with none queued, the oldest motion command that is not a `.halt`;
/// program requests and controls are never dropped (they come from people, not streams).
/// A poster holds the lock only for an append; delivering swaps buffers, so it does not
/// allocate once both have grown.
public final class SourceMailbox: Sendable {
    /// Motion commands held at most; a jog stream at the loop rate never comes near it.
    public let capacity: Int

    private struct State {
        var pending: [SourceRequest]
        var motionCount = 0
        var dropped = 0
        var stop = false
        var abort = false
    }

    private let state: Mutex<State>

    /// - Parameter capacity: motion commands held before the oldest jog (or, with no jog
    ///   queued, the oldest other motion command) is dropped; at least 1.
    public init(capacity: Int = 64) {
        self.capacity = max(1, capacity)
        state = Mutex(State(pending: Self.buffer(capacity: max(1, capacity))))
    }

    /// Queues `request` for the next tick.
    public func post(_ request: SourceRequest) {
        state.withLock { s in
            if case .motion = request {
                if s.motionCount >= capacity, let victim = Self.victim(in: s.pending) {
                    s.pending.remove(at: victim)
                    s.motionCount -= 1
                    s.dropped += 1
                }
                s.motionCount += 1
            }
            s.pending.append(request)
        }
    }

    /// A motion command for the next tick.
    public func post(_ command: MotionCommand) { post(.motion(command)) }

    /// A program request for the next tick.
    public func post(_ request: ProgramRequest) { post(.program(request)) }

    /// Ctrl-C / SIGTERM: brake within the limits, park, then the safe state.
    public func requestShutdown() { state.withLock { $0.stop = true } }

    /// A second Ctrl-C: no braking, straight to the safe state.
    public func requestAbort() { state.withLock { $0.abort = true } }

    /// Motion commands dropped because the mailbox was full.
    public var droppedCount: Int { state.withLock { $0.dropped } }

    /// The oldest jog, else the oldest motion command that is not a halt, else the oldest
    /// halt; nil with no motion command queued.
    private static func victim(in pending: [SourceRequest]) -> Int? {
        pending.firstIndex { if case .motion(.jog) = $0 { true } else { false } }
            ?? pending.firstIndex { if case .motion(let c) = $0 { c != .halt } else { false } }
            ?? pending.firstIndex { if case .motion = $0 { true } else { false } }
    }

    /// Hands every queued request, oldest first, to `source`, using `buffer` (empty, the
    /// caller's, reused every tick) so nothing allocates; a stop asked for and not yet
    /// applied (`stopFirst`) is applied before them, and an abort delivers nothing.
    /// Returns whether a stop and an abort were asked for (they stay asked). For the loop
    /// thread, or a test driving a source tick by tick.
    public func deliver<S: MotionSource>(to source: inout S, buffer: inout [SourceRequest], stopFirst: Bool = true) -> (stop: Bool, abort: Bool) {
        let (stop, abort) = state.withLock { s -> (Bool, Bool) in
            if !s.abort, !s.pending.isEmpty {
                swap(&s.pending, &buffer)
                s.motionCount = 0
            }
            return (s.stop, s.abort)
        }
        guard !abort else { return (stop, abort) }
        if stop, stopFirst { source.stop() }
        for request in buffer {
            switch request {
            case .advance: source.advance()
            case .shotDone: source.shotDone()
            case .redo: source.redo()
            case .goTo(let step): source.goTo(step: step)
            case .goHome: source.goHome()
            case .rejoin(let seconds, let frames): source.rejoin(pathSeconds: seconds, framesShot: frames)
            case .motion, .program: source.receive(request)
            }
        }
        buffer.removeAll(keepingCapacity: true)
        return (stop, abort)
    }

    /// A buffer for `deliver` that holds a full mailbox without growing.
    public static func buffer(capacity: Int = 64) -> [SourceRequest] {
        var b: [SourceRequest] = []
        b.reserveCapacity(capacity + 16)
        return b
    }
}
