import RigCore
import RigDFMoco
import Testing

@Suite struct GoMotionPlanTests {
    let rig: Rig
    init() throws { rig = try testRig() }

    func velocity(_ track: AxisTrack, at t: Double) -> Double {
        let h = 1e-6
        return (track.value(at: t + h) - track.value(at: t - h)) / (2 * h)
    }

    @Test(arguments: [
        (0.0, 10.0, 20.0, 0.2, 0.5),
        (-5.0, 0.0, 2.0, 0.5, 1.0),  // slowing down through the frame
        (0.0, 1.0, 0.0, 0.5, 0.5),  // a turn at p1
        (3.0, 3.0, 3.0, 0.1, 0.5),  // a still frame
        (10.0, 8.0, 8.0, 1.0, 0.25),  // the last frame of a move
    ])
    func meetsTheThreeExposurePositionsAfterAOneSecondRamp(_ p0: Double, _ p1: Double, _ p2: Double, _ exposure: Double, _ blur: Double) throws {
        let plan = GoMotionPlan(
            rig: rig, motions: [.init(axis: 0, previous: p0, current: p1, next: p2)],
            exposureSeconds: exposure, blurFraction: blur)
        let track = try #require(plan.tracks[0])
        #expect(plan.tracks[1] == nil)
        #expect(plan.exposureStartSeconds == 1)
        #expect(abs(plan.exposureEndSeconds - (1 + exposure)) < 1e-12)
        #expect(abs(track.value(at: 1) - (p1 - (p1 - p0) * blur)) < 1e-9)
        #expect(abs(track.value(at: 1 + exposure / 2) - p1) < 1e-9)
        #expect(abs(track.value(at: 1 + exposure) - (p1 + (p2 - p1) * blur)) < 1e-9)
        #expect(plan.startPose[0] == track.value(at: 0))
        // Starts and ends at rest, with no jump in velocity where the shutter opens.
        #expect(abs(velocity(track, at: 1e-5)) < 1e-2)
        #expect(abs(velocity(track, at: track.endTime - 1e-5)) < 1e-2)
        #expect(abs(velocity(track, at: 1 - 1e-5) - velocity(track, at: 1 + 1e-5)) < 1e-2)
        // The ramp is a constant acceleration: half-way it has covered a quarter.
        let start = track.value(at: 0)
        let opens = track.value(at: 1)
        #expect(abs(track.value(at: 0.5) - (start + (opens - start) / 4)) < 1e-9)
        #expect(plan.warnings.isEmpty)
    }

    @Test func warnsWhenTheLimitsWouldBendTheMove() {
        // 60° in 100 ms through the frame on pan (maxVelocity 90°/s).
        let fast = GoMotionPlan(
            rig: rig, motions: [.init(axis: 0, previous: -30, current: 0, next: 30)],
            exposureSeconds: 0.1, blurFraction: 0.5)
        #expect(fast.warnings.contains { $0.hasPrefix("axis \"pan\" would need 300°/s; its maxVelocity is 90°/s") })
        let far = GoMotionPlan(
            rig: rig, motions: [.init(axis: 1, previous: 30, current: 40, next: 50)],
            exposureSeconds: 0.5, blurFraction: 1)
        #expect(far.warnings.contains { $0.hasPrefix("axis \"tilt\" would travel") })
    }

    @Test func anAbsurdMoveIsWarnedAboutAndStaysBounded() throws {
        // ±21 million degrees in a 1 ms exposure: what a hostile bf line can ask for.
        let plan = GoMotionPlan(
            rig: rig, motions: [.init(axis: 0, previous: -21_474_836, current: 0, next: 21_474_836)],
            exposureSeconds: 0.001, blurFraction: 1)
        let track = try #require(plan.tracks[0])
        #expect(track.endTime <= 1 + 0.01 + GoMotionPlan.longestSlowDownSeconds)
        #expect(plan.warnings.count == 3)
        #expect(track.value(at: 0).isFinite && track.value(at: track.endTime).isFinite)
    }
}
