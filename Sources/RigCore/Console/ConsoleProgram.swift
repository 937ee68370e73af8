/// A program as a `ConsoleSource` plays it: the motion, how its steps advance, and where
/// it starts.
public struct ConsoleProgram: Sendable, Equatable {
    /// What the operator chose (a file name); shown in the status.
    public var name: String
    public var motion: Motion
    /// `.auto` advances a step as soon as it settles; `.interval(S)` paces the steps so
    /// each one's shot (its settled moment: the server fires no camera) starts S after the
    /// previous one's, as `rig play` does; every other trigger waits for `ConsoleRequest.next`.
    public var trigger: Trigger
    /// 0-based step a stepped program starts at (ignored for continuous paths).
    public var firstStep: Int

    /// How the camera shoots (the rig's camera, the program's `shoot`); nil: no camera.
    public var shots: ShootingPlan?
    /// The program's exposure ramp, for the camera.
    public var ramp: ExposureRamp?
    /// The steps' own intervals (`intervalKeys`).
    public var stepIntervals: [Double]?

    public init(
        name: String, motion: Motion, trigger: Trigger, firstStep: Int = 0, shots: ShootingPlan? = nil, ramp: ExposureRamp? = nil,
        stepIntervals: [Double]? = nil
    ) {
        self.name = name
        self.motion = motion
        self.trigger = trigger
        self.firstStep = firstStep
        self.shots = shots
        self.ramp = ramp
        self.stepIntervals = stepIntervals
    }

    /// How the player paces and times the shots: `interval:S` is shot start to shot start,
    /// the one meaning `rig play` and `rig check` give it; with a camera, each step holds
    /// for its shot as in `rig play`.
    public var shooting: ShootingPlan {
        var plan = stepCount > 0 ? (shots ?? .none) : .none
        if stepCount > 0, case .interval(let seconds) = trigger {
            plan.intervalSeconds = seconds
            plan.stepIntervals = stepIntervals
        }
        return plan
    }

    /// Steps in the whole program (0 for a continuous path).
    public var stepCount: Int { if case .stepped(let s) = motion { s.count } else { 0 } }
}
