import RigFormat

/// What a measured settle is expected to find at each step, for `rig check`: the program
/// played with the measured settle, the axes' payloads ringing on its frames (an axis
/// without a `payload` is taken as stiff: its camera is its frame), and the stillness
/// detector on their combined rate, noise-free.
public enum SettleForecast {
    public struct StepSettle: Sendable, Equatable {
        /// 0-based step.
        public var step: Int
        /// Seconds from the end of the move to the shot's start.
        public var seconds: Double
        /// False: not still within the timeout; the fixed settle applies.
        public var measured: Bool

        public init(step: Int, seconds: Double, measured: Bool) {
            self.step = step
            self.seconds = seconds
            self.measured = measured
        }
    }

    /// The expected settle of every step (the last time each was reached), in step order.
    /// `maxTicks` bounds the work as `FeasibilityChecker.check` does.
    public static func expected(
        rig: Rig, motion: Motion, startPose: [Double], settle: MeasuredSettle, shooting: ShootingPlan = .none,
        maxTicks: Int = Bounds.maxTicks
    ) -> [StepSettle] {
        var plan = shooting
        plan.selfTimed = true
        plan.measuredSettle = settle
        var player = Player(rig: rig, motion: motion, startPose: startPose, shooting: plan)
        var cameras = rig.axes.indices.map { i in rig.axes[i].payload.map { PayloadResponse(payload: $0, tickSeconds: rig.tickSeconds, angle: startPose[i]) } }
        var detector = StillnessDetector(settle, rig: rig)
        var frame = startPose
        var previous = startPose
        var found: [Int: StepSettle] = [:]
        var ticks = 0
        while !player.isFinished, ticks < maxTicks {
            ticks += 1
            switch player.tick(into: &frame) {
            case .settled(let step, let seconds, let measured)?: found[step] = StepSettle(step: step, seconds: seconds, measured: measured)
            case .ready?: player.advance()
            default: break
            }
            var sum = 0.0
            var moving = false
            for i in rig.axes.indices where frame[i] != previous[i] { moving = true }
            detector.commanded(moving: moving)
            for i in rig.axes.indices {
                let rate: Double
                if cameras[i] != nil {
                    cameras[i]?.step(horn: frame[i])
                    rate = cameras[i]?.rate ?? 0
                } else {
                    rate = (frame[i] - previous[i]) / rig.tickSeconds
                }
                sum += rate * rate
                previous[i] = frame[i]
            }
            detector.observe(rateDegreesPerSecond: sum.squareRoot(), seconds: rig.tickSeconds)
            player.measured(still: detector.isStill)
        }
        return found.keys.sorted().compactMap { found[$0] }
    }
}
