/// How many ticks playing a program takes, bounded from above without simulating it: the
/// lead-in (or every move and settle), the path, and the park. `rig check`, `plan`, `plot`
/// and `play` refuse a program over `Bounds.maxTicks` before doing any work on it.
public enum MotionBudget {
    /// An upper bound on the ticks `Player` emits for `motion` from `startPose` when every
    /// step is advanced at once (as `rig check` does). A Double: a hostile program can ask
    /// for more ticks than `Int` holds, and this must be computable for it.
    public static func ticks(rig: Rig, motion: Motion, startPose: [Double]) -> Double {
        let dt = rig.tickSeconds
        var total = 0.0
        var pose = startPose
        func move(to target: [Double]) {
            var longest = 0.0
            for i in rig.axes.indices where i < target.count && i < pose.count {
                // The same planner PoseMove uses, so the bound holds for its moves.
                longest = max(longest, SCurveProfile.minimumDuration(
                    distance: target[i] - pose[i], maxVelocity: rig.axes[i].maxVelocity,
                    maxAcceleration: rig.axes[i].maxAcceleration, maxJerk: rig.axes[i].maxJerk))
            }
            // PoseMove rounds up to whole ticks; one more for the tick that reports arrival.
            total += (longest / dt * (1 + 1e-9)).rounded(.up) + 1
            pose = target
        }
        switch motion {
        case .continuous(let tracks, let duration):
            move(to: rig.axes.indices.map { tracks[$0]?.keys.first?.value ?? rig.axes[$0].home })
            total += (duration / dt).rounded(.up) + 1
            // The path ends wherever its last keys are.
            pose = rig.axes.indices.map { tracks[$0]?.keys.last?.value ?? rig.axes[$0].home }
        case .stepped(let steps):
            for step in steps {
                move(to: step.pose)
                total += (step.settleSeconds / dt).rounded(.up) + 1
                if !total.isFinite || total > 1e18 { return total }
            }
        }
        move(to: rig.axes.indices.map { rig.axes[$0].park ?? pose[$0] })
        return total + 2
    }
}
