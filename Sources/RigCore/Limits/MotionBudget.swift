import RigFormat

/// How many ticks playing a program takes, bounded from above without simulating it: the
/// lead-in (or every move — with its backlash overshoot — settle, shots and interval
/// slot), the path, and the park. `rig check`, `plan`, `plot` and `play` refuse a program
/// over `Bounds.maxTicks` before doing any work on it.
public enum MotionBudget {
    /// An upper bound on the ticks `Player` emits for `motion` from `startPose` when every
    /// step is advanced at once (as `rig check` does). A Double: a hostile program can ask
    /// for more ticks than `Int` holds, and this must be computable for it.
    public static func ticks(rig: Rig, motion: Motion, startPose: [Double], shooting: ShootingPlan = .none) -> Double {
        let dt = rig.tickSeconds
        var total = 0.0
        var pose = startPose
        func seconds(_ s: Double) -> Double { (s / dt).rounded(.up) + 1 }
        func move(to target: [Double], backlash: Bool = false) {
            var longest = 0.0
            for i in rig.axes.indices where i < target.count && i < pose.count {
                // A backlash approach overshoots first: bound it by the distance plus the lash, twice.
                let lash = backlash ? rig.axes[i].backlashDeg : 0
                let distance = abs(target[i] - pose[i]) + lash
                // The same planner PoseMove uses, so the bound holds for its moves.
                let t = SCurveProfile.minimumDuration(
                    distance: distance, maxVelocity: rig.axes[i].maxVelocity,
                    maxAcceleration: rig.axes[i].maxAcceleration, maxJerk: rig.axes[i].maxJerk)
                longest = max(longest, backlash && lash > 0 ? 2 * t : t)
            }
            // PoseMove rounds up to whole ticks; one more for the tick that reports arrival.
            total += (longest / dt * (1 + 1e-9)).rounded(.up) + (backlash ? 3 : 1)
            pose = target
        }
        switch motion {
        case .continuous(let tracks, let duration):
            move(to: rig.axes.indices.map { tracks[$0]?.keys.first?.value ?? rig.axes[$0].home })
            total += seconds(duration)
            // The path ends wherever its last keys are.
            pose = rig.axes.indices.map { tracks[$0]?.keys.last?.value ?? rig.axes[$0].home }
        case .stepped(let steps):
            var perShot = 0.0
            if let timing = shooting.timing {
                perShot = Double(max(1, timing.shotsPerStep)) * (seconds(timing.shotSeconds) + seconds(timing.afterShotSeconds) + 2)
            }
            let interval = shooting.intervalSeconds.map(seconds) ?? 0
            for step in steps {
                move(to: step.pose, backlash: true)
                total += seconds(step.settleSeconds) + perShot + interval
                if !total.isFinite || total > 1e18 { return total }
            }
        }
        move(to: rig.axes.indices.map { rig.axes[$0].park ?? pose[$0] })
        return total + 2
    }
}
