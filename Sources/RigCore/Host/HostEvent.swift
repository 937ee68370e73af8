/// What the program host did: the one account of programs started, requests refused and
/// programs ended that `rig serve` and the session's parts follow (nothing is guessed
/// from polled state). Made on the loop thread, reported through the loop's events.
public enum HostEvent: Sendable, Equatable, CustomStringConvertible {
    /// A program took the rig (its first tick is next); `steps`: its step count (0 for a path).
    case started(program: String, steps: Int)
    /// A request changed nothing, and why.
    case refused(ProgramRequest.Kind, HostRefusal)
    /// The program is over and the rig parked: the host takes motion commands again (or,
    /// for `rig play`, is done).
    case ended(program: String, ProgramEnd)

    public var description: String {
        switch self {
        case .started(let name, _): "\(name) started"
        case .refused(let kind, let why): "\(kind) refused: \(why)"
        case .ended(let name, let how): "\(name) \(how)"
        }
    }
}

/// How a program ended.
public enum ProgramEnd: Sendable, Equatable, CustomStringConvertible {
    /// It played to its end.
    case completed
    /// A stop (the phone's STOP, a signal, the session's end) braked it and it parked.
    case stopped
    /// A frame it needed was beyond an axis's limits (0-based axis): it was braked within
    /// them and parked.
    case limited(axis: Int)
    /// The rig stood still through a long stall while moving: it stopped from rest.
    case stalled

    public var description: String {
        switch self {
        case .completed: "completed"
        case .stopped: "stopped"
        case .limited(let axis): "stopped by the limiter (axis \(axis + 1))"
        case .stalled: "stopped after a stall"
        }
    }
}

/// Why the host refused a request (nothing moved because of it).
public enum HostRefusal: Sendable, Equatable, CustomStringConvertible {
    /// A play while a program plays or the rig moves.
    case notAtRest
    /// A step request while the program is not waiting at a step.
    case notWaiting
    /// A second Next during one wait.
    case nextAlreadyTaken
    /// Back at the first step.
    case atFirstStep
    /// Pause for a program without steps.
    case noSteps
    /// Resume while not paused.
    case notPaused
    /// A program request with no program playing.
    case noProgram
    /// The host is stopping for good (the session ends).
    case stopping

    public var description: String {
        switch self {
        case .notAtRest: "the rig was not at rest"
        case .notWaiting: "the program was not waiting at a step"
        case .nextAlreadyTaken: "next was already taken at this step"
        case .atFirstStep: "the program is at its first step"
        case .noSteps: "a continuous path cannot pause"
        case .notPaused: "the program was not paused"
        case .noProgram: "no program was playing"
        case .stopping: "the rig is shutting down"
        }
    }
}

extension ProgramRequest {
    /// A request without its payload, for events and refusals.
    public enum Kind: String, Sendable, Equatable, CustomStringConvertible {
        case play, next, back, redo, pause, resume, stop
        public var description: String { rawValue }
    }

    public var kind: Kind {
        switch self {
        case .play: .play
        case .next: .next
        case .back: .back
        case .redo: .redo
        case .pause: .pause
        case .resume: .resume
        case .stop: .stop
        }
    }
}
