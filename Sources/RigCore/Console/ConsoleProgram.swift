/// A program as a `ConsoleSource` plays it: the motion, how its steps advance, and where
/// it starts.
public struct ConsoleProgram: Sendable, Equatable {
    /// What the operator chose (a file name); shown in the status.
    public var name: String
    public var motion: Motion
    /// `.auto` advances a step as soon as it settles, `.interval` that long after it
    /// settles; every other trigger waits for `ConsoleRequest.next`.
    public var trigger: Trigger
    /// 0-based step a stepped program starts at (ignored for continuous paths).
    public var firstStep: Int

    public init(name: String, motion: Motion, trigger: Trigger, firstStep: Int = 0) {
        self.name = name
        self.motion = motion
        self.trigger = trigger
        self.firstStep = firstStep
    }

    /// Steps in the whole program (0 for a continuous path).
    public var stepCount: Int { if case .stepped(let s) = motion { s.count } else { 0 } }
}
