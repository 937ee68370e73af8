import PropertyBased
import Testing

@testable import RigCore
@testable import RigSky

@Suite struct MotionLimiterTests {
    @Test func neverLetsAFrameOutOfLimits() async {
        let wild = Generator(run: { rng in
            var g = SplitMix64(seed: rng.next())
            let rig = Scenario.randomRig(&g)
            let start = rig.axes.map { Double.random(in: $0.softMin...$0.softMax, using: &g) }
            let frames = (0..<Int.random(in: 50...600, using: &g)).map { _ in
                rig.axes.map { axis -> Double in
                    switch Int.random(in: 0..<4, using: &g) {
                    case 0: return Double.random(in: -1000...1000, using: &g)
                    case 1: return Bool.random(using: &g) ? axis.softMax + 5 : axis.softMin - 5
                    default: return Double.random(in: axis.softMin...axis.softMax, using: &g)
                    }
                }
            }
            return (Scenario(seed: 0, rig: rig, motion: .stepped([]), startPose: start), frames)
        })
        await propertyCheck(count: 300, input: wild) { input in
            let (s, wanted) = input
            var limiter = MotionLimiter(axes: s.rig.axes, tickSeconds: s.rig.tickSeconds, startPose: s.startPose)
            var out: [[Double]] = []
            for var frame in wanted {
                _ = limiter.limit(&frame)
                out.append(frame)
            }
            // The limiter may still be moving when the input ends: no rest frame after it.
            let excess = LimitExcess(frames: out, rig: s.rig, startPose: s.startPose, endsAtRest: false)
            #expect(excess.relative <= 1e-6, "\(s): \(excess)")
        }
    }

    @Test func holdsStillNextToASoftLimit() {
        // At 20 Hz and 580°/s², a·dt²/8 = 0.18°: a pose 0.1° inside the limit used to get
        // pushed away and then jitter ±0.03° around it every tick.
        let axis = servoAxis("a", channel: 0, softMin: -60, softMax: 60, maxVelocity: 290, maxAcceleration: 580)
        var limiter = MotionLimiter(axes: [axis], tickSeconds: 0.05, startPose: [59.9])
        for _ in 0..<20 {
            var frame = [59.9]
            #expect(limiter.limit(&frame) == nil)
            #expect(frame == [59.9])
        }
        var low = MotionLimiter(axes: [axis], tickSeconds: 0.05, startPose: [-59.95])
        var frame = [-59.95]
        #expect(low.limit(&frame) == nil && frame == [-59.95])
    }

    @Test func roundingSlackNeverLetsAccelerationThrough() {
        // A fast axis with a gentle acceleration at 500 Hz: a·dt = 0.04°/s per tick, while
        // a slack of a millionth of maxVelocity (300°/s) would be 0.0003°/s, 0.75 % of
        // amax. Ask for just that much more than the acceleration allows, every tick.
        let axis = servoAxis("a", channel: 0, softMin: -90, softMax: 90, maxVelocity: 300, maxAcceleration: 20)
        let dt = 1.0 / 500
        var limiter = MotionLimiter(axes: [axis], tickSeconds: dt, startPose: [0])
        var out: [[Double]] = []
        var x = 0.0
        var v = 0.0
        for _ in 0..<200 {
            v += 20 * dt + 0.9e-6 * 300
            x += v * dt
            var frame = [x]
            _ = limiter.limit(&frame)
            out.append(frame)
            x = frame[0]
            v = limiter.velocities[0]
        }
        let excess = LimitExcess(frames: out, rig: simRig([axis], loopRateHz: 500), startPose: [0], endsAtRest: false)
        #expect(excess.relative <= 1e-6, "\(excess)")
    }

    @Test func brakesToStopAtTheSoftLimit() {
        // Asked to run through the limit at full speed, the axis stops at it within limits.
        let axis = servoAxis("a", channel: 0, softMin: -60, softMax: 60, maxVelocity: 90, maxAcceleration: 180)
        var limiter = MotionLimiter(axes: [axis], tickSeconds: 0.01, startPose: [0])
        var out: [[Double]] = []
        for k in 1...400 {
            var frame = [Double(k) * 0.9]
            _ = limiter.limit(&frame)
            out.append(frame)
        }
        let excess = LimitExcess(frames: out, rig: simRig([axis]), startPose: [0])
        #expect(excess.relative <= 1e-6, "\(excess)")
        #expect(abs((out.last?[0] ?? 0) - 60) < 0.5)
    }

    @Test func leavesAFeasibleTrajectoryUnchanged() async {
        var checked = 0
        await propertyCheck(count: 300, input: Scenario.generator) { s in
            guard FeasibilityChecker.check(rig: s.rig, motion: s.motion, startPose: s.startPose).feasible else { return }
            checked += 1
            let run = drive(rig: s.rig, motion: s.motion, startPose: s.startPose)
            var limiter = MotionLimiter(axes: s.rig.axes, tickSeconds: s.rig.tickSeconds, startPose: s.startPose)
            for (k, original) in run.frames.enumerated() {
                var frame = original
                let changed = limiter.limit(&frame)
                #expect(changed == nil, "\(s): frame \(k) changed on axis \(changed ?? -1)")
                for i in frame.indices { #expect(abs(frame[i] - original[i]) <= 1e-6 * (abs(original[i]) + 1)) }
                if changed != nil { return }
            }
        }
        #expect(checked > 20)
    }
}
