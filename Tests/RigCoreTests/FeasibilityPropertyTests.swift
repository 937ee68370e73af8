import PropertyBased
import Testing

@testable import RigCore

/// `rig check` must accept exactly the programs whose played frames stay within limits.
@Suite struct FeasibilityPropertyTests {
    @Test func checkAcceptsExactlyTheProgramsThatStayWithinLimits() async {
        var total = 0
        var feasible = 0
        var stepped = 0
        var continuous = 0
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
        #expect(Double(feasible) >= 0.2 * Double(total), "only \(feasible) of \(total) feasible")
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

/// Stopping a program the checker accepted, at any tick, stays within every limit.
@Suite struct StopPropertyTests {
    @Test func stoppingAFeasibleProgramAnywhereStaysWithinLimits() async {
        let stops = Generator(run: { rng in (Scenario.make(seed: rng.next(), stepped: nil), Double.random(in: 0..<1, using: &rng)) })
        var checked = 0
        await propertyCheck(count: 400, input: stops) { s, fraction in
            let report = FeasibilityChecker.check(rig: s.rig, motion: s.motion, startPose: s.startPose)
            guard report.feasible else { return }
            checked += 1
            let stopTick = Int(fraction * Double(report.ticks))
            let run = drive(rig: s.rig, motion: s.motion, startPose: s.startPose) { tick, player in
                if tick == stopTick { player.stop() }
            }
            let excess = LimitExcess(frames: run.frames, rig: s.rig, startPose: s.startPose)
            #expect(excess.relative <= 2e-6, "\(s) stopped at tick \(stopTick): \(excess)")
            #expect(run.events.last?.event == .finished)
            let parked = s.rig.axes.enumerated().map { i, axis in axis.park ?? run.frames.last?[i] ?? 0 }
            let last = run.frames.last ?? []
            #expect(zip(last, parked).allSatisfy { abs($0 - $1) <= 1e-9 * (abs($1) + 1) }, "parked at \(last), not \(parked)")
        }
        #expect(checked > 50)
    }
}
