import PropertyBased
@testable import RigCore
import Testing

/// `rig check` must accept exactly the programs whose played frames stay within limits.
@Suite struct FeasibilityPropertyTests {
    @Test func checkAcceptsExactlyTheProgramsThatStayWithinLimits() async {
        var total = 0, feasible = 0, stepped = 0, continuous = 0
        await propertyCheck(count: 600, input: Scenario.generator) { s in
            let report = FeasibilityChecker.check(rig: s.rig, motion: s.motion, startPose: s.startPose)
            let run = drive(rig: s.rig, motion: s.motion, startPose: s.startPose)
            let excess = LimitExcess(frames: run.frames, rig: s.rig, startPose: s.startPose)
            total += 1
            #expect(run.frames.count == report.ticks, "\(s)")
            if report.feasible {
                feasible += 1
                if case .stepped = s.motion { stepped += 1 } else { continuous += 1 }
                // Accepted: every frame within the limits (the checker allows 1e-6 relative).
                #expect(excess.relative <= 2e-6, "\(s): accepted, but \(excess)")
            } else {
                // Rejected: some frame really breaks a limit.
                #expect(excess.relative > 5e-7, "\(s): rejected (\(report.problems[0])), but \(excess)")
            }
        }
        // The property is only worth something if a good share of programs pass.
        #expect(Double(feasible) >= 0.25 * Double(total), "only \(feasible) of \(total) feasible")
        #expect(stepped > 0 && continuous > 0, "feasible: \(stepped) stepped, \(continuous) continuous")
    }

    @Test func problemsNameTheAxisAndTheLimit() throws {
        // 0 → 80° in 0.5 s with smooth: peak velocity 1.5·80/0.5 = 240°/s > 90°/s.
        let rig = simRig([servoAxis("pan", channel: 0)])
        let track = AxisTrack(keys: [Keyframe(time: 0, value: 0), Keyframe(time: 0.5, value: 80)])
        let report = FeasibilityChecker.check(rig: rig, motion: .continuous(tracks: [track], durationSeconds: 0.5), startPose: [0])
        let problem = try #require(report.problems.first)
        #expect(problem.axisName == "pan")
        #expect(problem.violation.limit == .velocity || problem.violation.limit == .acceleration)
        #expect(problem.during == "keyframe path")
    }
}
