import PropertyBased
@testable import RigCore
import Testing

@Suite struct CalibrationTests {
    func make(_ points: [(Double, Double)], inverted: Bool = false) -> Result<Calibration, CalibrationProblem> {
        Calibration.make(points: points.map { (angleDeg: $0.0, pulseMicroseconds: $0.1) }, inverted: inverted)
    }

    @Test func multiPointIsPiecewiseLinear() throws {
        // Unsorted on purpose: the table sorts by angle. Segments: −90…0 at 10 µs/°, 0…90 at 5 µs/°.
        let c = try make([(90, 1950), (-90, 600), (0, 1500)]).get()
        #expect(c.angles == [-90, 0, 90])
        #expect(c.pulseMicroseconds(forAngle: -45) == 1050)
        #expect(c.pulseMicroseconds(forAngle: 0) == 1500)
        #expect(c.pulseMicroseconds(forAngle: 45) == 1725)
        // Outside the table the end segments extend: 100° → 1950 + 10·5.
        #expect(c.pulseMicroseconds(forAngle: 100) == 2000)
        #expect(c.pulseMicroseconds(forAngle: -100) == 500)
        #expect(c.angleRange == -90...90)
    }

    @Test func invertedMirrorsThePulses() throws {
        // 1000…2000 µs mirrored: −90° → 2000, 90° → 1000, 45° → 1250.
        let c = try make([(-90, 1000), (90, 2000)], inverted: true).get()
        #expect(c.pulseMicroseconds(forAngle: -90) == 2000)
        #expect(c.pulseMicroseconds(forAngle: 90) == 1000)
        #expect(c.pulseMicroseconds(forAngle: 45) == 1250)
        #expect(c.angle(forPulseMicroseconds: 1250) == 45)
    }

    @Test func inverseUndoesTheMapping() async {
        let tables = Generator(run: { rng in
            var g = SplitMix64(seed: rng.next())
            let count = Int.random(in: 2...6, using: &g)
            var angle = Double.random(in: -180 ... -30, using: &g), pulse = Double.random(in: 500...1000, using: &g)
            let falling = Bool.random(using: &g)
            var points: [(Double, Double)] = []
            for _ in 0..<count {
                points.append((angle, falling ? 3000 - pulse : pulse))
                angle += Double.random(in: 5...60, using: &g)
                pulse += Double.random(in: 20...400, using: &g)
            }
            return (points.map(\.0), points.map(\.1), Bool.random(using: &g), Double.random(in: 0...1, using: &g))
        })
        await propertyCheck(count: 200, input: tables) { angles, pulses, inverted, u in
            guard case .success(let c) = make(Array(zip(angles, pulses)), inverted: inverted) else {
                Issue.record("a strictly monotonic table was rejected")
                return
            }
            let angle = c.angleRange.lowerBound + u * (c.angleRange.upperBound - c.angleRange.lowerBound)
            let back = c.angle(forPulseMicroseconds: c.pulseMicroseconds(forAngle: angle))
            #expect(abs(back - angle) < 1e-9 * (abs(angle) + 1))
        }
    }

    @Test func badTablesAreRejected() {
        #expect(make([(0, 1500)]) == .failure(.tooFewPoints))
        #expect(make([(0, 1500), (0, 1600)]) == .failure(.duplicateAngle(0)))
        #expect(make([(-90, 1000), (0, 1600), (90, 1400)]) == .failure(.notMonotonic))
        #expect(make([(-90, 1000), (0, 1000)]) == .failure(.notMonotonic))
    }
}

@Suite struct TrapezoidTests {
    @Test func minimumDurationByHand() {
        // 90° at 90°/s, 180°/s²: ramps take 0.5 s and 22.5° each, 45° cruise takes 0.5 s → 1.5 s.
        #expect(abs(TrapezoidProfile.minimumDuration(distance: 90, maxVelocity: 90, maxAcceleration: 180) - 1.5) < 1e-12)
        #expect(abs(TrapezoidProfile.minimumDuration(distance: -90, maxVelocity: 90, maxAcceleration: 180) - 1.5) < 1e-12)
        // 10°: never reaches 90°/s (needs 45°), a triangle: 2·√(10/180) = 0.4714 s.
        #expect(abs(TrapezoidProfile.minimumDuration(distance: 10, maxVelocity: 90, maxAcceleration: 180) - 2 * (10.0 / 180).squareRoot()) < 1e-12)
        #expect(TrapezoidProfile.minimumDuration(distance: 0, maxVelocity: 90, maxAcceleration: 180) == 0)
    }

    @Test func stretchedMoveCruisesSlower() {
        // 90° in 3 s at 180°/s²: v = (aT − √(a²T² − 4ad))/2 = (540 − √226800)/2 ≈ 31.88°/s.
        let p = TrapezoidProfile(start: 10, distance: 90, duration: 3, maxAcceleration: 180)
        #expect(abs(p.peakVelocity - (540 - 226_800.0.squareRoot()) / 2) < 1e-9)
        #expect(p.position(at: 0) == 10)
        #expect(p.position(at: 3) == 100)
        #expect(abs(p.position(at: 1.5) - 55) < 1e-9, "symmetric: halfway in half the time")
        let back = TrapezoidProfile(start: 10, distance: -90, duration: 3, maxAcceleration: 180)
        #expect(abs(back.position(at: 1) - (10 - (p.position(at: 1) - 10))) < 1e-12)
    }

    @Test func stretchNeverExceedsTheLimits() async {
        let moves = Generator(run: { rng in
            var g = SplitMix64(seed: rng.next())
            return (Double.random(in: -300...300, using: &g), Double.random(in: 5...300, using: &g),
                    Double.random(in: 10...1000, using: &g), Double.random(in: 1...4, using: &g))
        })
        await propertyCheck(count: 300, input: moves) { distance, vmax, amax, stretch in
            let minimum = TrapezoidProfile.minimumDuration(distance: distance, maxVelocity: vmax, maxAcceleration: amax)
            let p = TrapezoidProfile(start: 0, distance: distance, duration: minimum * stretch, maxAcceleration: amax)
            #expect(p.peakVelocity <= vmax * (1 + 1e-9))
            #expect(abs(p.position(at: p.duration) - distance) < 1e-9)
            // Sample finely: positions move monotonically and the numeric speed stays ≤ peak.
            let dt = p.duration / 2000
            var last = 0.0
            for k in 1...2000 {
                let x = p.position(at: Double(k) * dt)
                #expect(abs(x - last) / dt <= p.peakVelocity * (1 + 1e-6) + 1e-9)
                #expect((x - last) * distance >= -1e-12)
                last = x
            }
        }
    }

    @Test func poseMoveArrivesTogetherInWholeTicks() {
        let axes = [servoAxis("a", channel: 0), servoAxis("b", channel: 1, maxVelocity: 30, maxAcceleration: 60)]
        var move = PoseMove(from: [0, 0], to: [90, 10], axes: axes, tickSeconds: 0.01)
        // Axis a needs 1.5 s; axis b 10° at 30°/s, 60°/s²: v²/a = 15 > 10 → 2·√(10/60) ≈ 0.816 s.
        #expect((150...151).contains(move.ticks))
        var pose = [0.0, 0.0]
        move.sample(tick: move.ticks, tickSeconds: 0.01, into: &pose)
        #expect(pose == [90, 10])
        move.plan(from: [5, 5], to: [5, 5], axes: axes, tickSeconds: 0.01)
        #expect(move.ticks == 0)
    }
}

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
            return Scenario(seed: 0, rig: rig, motion: .stepped([]), startPose: start).withFrames(frames)
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

extension Scenario {
    func withFrames(_ frames: [[Double]]) -> (Scenario, [[Double]]) { (self, frames) }
}
