import RigSky

/// A program as the program host (`ProgramHost`) plays it, for `rig play` and `rig
/// serve` alike: the motion, how its steps advance, where it starts and how it shoots.
public struct HostedProgram: Sendable, Equatable {
    /// What the operator chose (a file name); shown in the status.
    public var name: String
    public var motion: Motion
    /// `.auto` advances a step as soon as it settles; `.interval(S)` paces the steps so
    /// each one's shot (its settled moment: the server fires no camera) starts S after the
    /// previous one's, as `rig play` does; every other trigger waits for `ProgramRequest.next`.
    public var trigger: Trigger
    /// 0-based step a stepped program starts at (ignored for continuous paths).
    public var firstStep: Int
    /// False: the rig is at the first step already (`rig play --start-here`).
    public var moveToFirstStep = true
    /// A keyframes program holds at its first pose after the lead-in until the next
    /// `advance` (a group starts the path at one time on every rig).
    public var holdsBeforePath = false
    /// False: the program ends where its motion does, without parking (`rig jog`'s preview
    /// hands the rig back to the sticks there).
    public var parks = true

    /// How the camera shoots (the rig's camera, the program's `shoot`); nil: no camera.
    public var shots: ShootingPlan?
    /// The program's exposure ramp, for the camera.
    public var ramp: ExposureRamp?
    /// The steps' own intervals (`intervalKeys`).
    public var stepIntervals: [Double]?
    /// A stepped sky track's seconds when the program starts (`Player.trackSecondsAtStart`):
    /// its frames point where the target is when each is shot. nil: at their planned times.
    public var trackSecondsAtStart: Double?
    /// The player, built before the request reaches the loop (`prepare(from:)`), so taking
    /// the program allocates nothing on the loop thread.
    public var prepared: PreparedPlayer?

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
        var plan = shots ?? .none
        if stepCount > 0, plan.intervalSeconds == nil { plan.pace(by: trigger, stepIntervals: stepIntervals) }
        return plan
    }

    /// Builds the player from `pose` (where the rig rests) off the loop thread. The loop
    /// takes it only if the rig still rests exactly there; else it builds one itself.
    public mutating func prepare(rig: Rig, from pose: [Double]) {
        prepared = PreparedPlayer(player: player(rig: rig, from: pose), startPose: pose)
    }

    /// The program's player from `pose`.
    public func player(rig: Rig, from pose: [Double]) -> Player {
        var rig = rig
        if !parks { for i in rig.axes.indices { rig.axes[i].park = nil } }
        return Player(
            rig: rig, motion: motion, startPose: pose, moveToFirstStep: moveToFirstStep, firstStep: firstStep, shooting: shooting,
            trackSecondsAtStart: trackSecondsAtStart, holdsBeforePath: holdsBeforePath)
    }

    /// Puts a stepped sky track on the clock: it starts at `nowUnix` (UTC), so each frame
    /// points where its target is when it is shot. Nothing for other programs.
    public mutating func startTrackClock(nowUnix: Double) {
        guard case .stepped(let steps) = motion, let track = steps.first(where: { $0.aim != nil })?.aim else { return }
        trackSecondsAtStart = nowUnix - track.startUnix
        // Once here, off the loop thread: the ephemeris's tables (the moon's terms) are made
        // on first use, and the loop thread allocates nothing.
        _ = Sky.position(of: track.target, at: nowUnix, site: track.site)
    }

    /// Steps in the whole program (0 for a continuous path).
    public var stepCount: Int { if case .stepped(let s) = motion { s.count } else { 0 } }
}

/// A `Player` made ahead of time for a `HostedProgram`, with the pose it starts from.
/// Equal when the start poses are: the player is derived from the program.
public struct PreparedPlayer: Sendable, Equatable {
    public var player: Player
    public var startPose: [Double]

    public static func == (a: PreparedPlayer, b: PreparedPlayer) -> Bool { a.startPose == b.startPose }
}
