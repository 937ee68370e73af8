/// One shot's timing as the player plans it, from the rig's camera and the program's
/// `shoot` settings: focus → shutter → exposure → release, then the after-shot wait.
public struct ShotTiming: Sendable, Equatable {
    public var focusSeconds: Double
    /// How long the shutter contact stays closed: the exposure in bulb mode, else the
    /// camera's `shutterMs`.
    public var shutterHoldSeconds: Double
    /// From shutter press until the exposure is over and the rig may move again.
    public var exposureWindowSeconds: Double
    public var afterShotSeconds: Double
    public var shotsPerStep: Int
    /// Bulb mode: the shutter contact is held for each frame's exposure.
    public var bulb = false

    public init(camera: CameraConfig, shoot: ShootConfig) {
        bulb = shoot.bulb
        focusSeconds = camera.focusSeconds
        shutterHoldSeconds = shoot.bulb ? shoot.exposureSeconds : camera.shutterSeconds
        exposureWindowSeconds = max(shutterHoldSeconds, shoot.exposureSeconds)
        afterShotSeconds = camera.afterShotSeconds
        shotsPerStep = shoot.shotsPerStep
    }

    public init(focusSeconds: Double, shutterHoldSeconds: Double, exposureWindowSeconds: Double, afterShotSeconds: Double, shotsPerStep: Int) {
        self.focusSeconds = focusSeconds
        self.shutterHoldSeconds = shutterHoldSeconds
        self.exposureWindowSeconds = max(exposureWindowSeconds, shutterHoldSeconds)
        self.afterShotSeconds = afterShotSeconds
        self.shotsPerStep = max(1, shotsPerStep)
    }

    /// From focus to the end of the exposure: the time the rig holds still for one shot.
    public var shotSeconds: Double { focusSeconds + exposureWindowSeconds }

    /// The same for a frame exposed `exposure` seconds (`ShootingPlan.frameExposureSeconds`).
    public func shotSeconds(exposure: Double) -> Double {
        focusSeconds + (bulb ? exposure : max(shutterHoldSeconds, exposure))
    }
}

/// How a player shoots: with which timing, at what interval, and who ends each shot.
public struct ShootingPlan: Sendable, Equatable {
    /// nil: no camera on this run (none in the rig, `--no-shoot`, or Cascable shoots).
    public var timing: ShotTiming?
    /// Shot start to shot start (`--trigger interval:S`); nil: as the trigger says.
    public var intervalSeconds: Double?
    /// True: the player ends each shot itself after `timing.shotSeconds` (the simulated
    /// camera, `rig check`). False: it holds until `shotDone()` (a real camera reports).
    public var selfTimed: Bool
    /// A ramped interval (a timelapse's `intervalKeys`): element i is the time from step
    /// i's shot to step i+1's; `intervalSeconds` for steps past its end.
    public var stepIntervals: [Double]?
    /// Each step's frames' own exposures (`Program.frameExposureSeconds`): a self-timed
    /// shot holds for its frame's exposure, not the program's longest, so `rig check`
    /// times every frame as it will be. nil: every frame takes `timing`'s.
    public var frameExposureSeconds: [[Double]]?
    /// Each step's shot waits until the head is measured still (the loop feeds the
    /// measurement: `MotionSource.measured(still:)`), up to the timeout; nil: the fixed
    /// `settleSeconds`.
    public var measuredSettle: MeasuredSettle?

    public init(
        timing: ShotTiming? = nil, intervalSeconds: Double? = nil, selfTimed: Bool = true, stepIntervals: [Double]? = nil,
        frameExposureSeconds: [[Double]]? = nil
    ) {
        self.timing = timing
        self.intervalSeconds = intervalSeconds
        self.selfTimed = selfTimed
        self.stepIntervals = stepIntervals
        self.frameExposureSeconds = frameExposureSeconds
    }

    /// How long the rig holds still for frame `bracket` (0-based) of `step`: its own
    /// exposure when known, else the timing's; nil without a camera.
    public func shotSeconds(step: Int, bracket: Int) -> Double? {
        guard let timing else { return nil }
        if let frames = frameExposureSeconds, frames.indices.contains(step), frames[step].indices.contains(bracket) {
            return timing.shotSeconds(exposure: frames[step][bracket])
        }
        return timing.shotSeconds
    }

    /// The interval from step `step`'s shot to the next step's, if the shots are paced.
    public func interval(after step: Int) -> Double? {
        guard intervalSeconds != nil else { return nil }
        if let stepIntervals, stepIntervals.indices.contains(step) { return stepIntervals[step] }
        return intervalSeconds
    }

    /// Paces a stepped program's shots by `trigger` when it is `interval:S` (shot start to
    /// shot start, ramped by `stepIntervals`): the one meaning `rig play`, `rig check` and
    /// `rig serve` give it. Any other trigger changes nothing.
    public mutating func pace(by trigger: Trigger, stepIntervals: [Double]?) {
        guard case .interval(let seconds) = trigger else { return }
        intervalSeconds = seconds
        self.stepIntervals = stepIntervals
    }

    /// Nothing to shoot, no pacing: the player behaves as it did before cameras.
    public static let none = ShootingPlan()
}
