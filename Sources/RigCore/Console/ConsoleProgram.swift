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

    /// The motion played from `step` on (steps before it dropped), clamped to the
    /// program: what a feasibility check must look at before the program starts there.
    public func motion(fromStep step: Int) -> Motion {
        guard case .stepped(let steps) = motion, !steps.isEmpty else { return motion }
        let first = min(max(step, 0), steps.count - 1)
        return .stepped(Array(steps[first...]))
    }

    /// The motion played when the program starts (`motion(fromStep: firstStep)`).
    public var startMotion: Motion { motion(fromStep: firstStep) }
}
