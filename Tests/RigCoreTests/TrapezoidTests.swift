import PropertyBased
import Testing

@testable import RigCore
@testable import RigSky

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
            return (
                Double.random(in: -300...300, using: &g), Double.random(in: 5...300, using: &g),
                Double.random(in: 10...1000, using: &g), Double.random(in: 1...4, using: &g)
            )
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
        // S-curves (maxJerk = 10·maxAcceleration): axis a needs 1.6 s (SCurveTests), axis b
        // 10° at 30°/s, 60°/s², 600°/s³ less.
        #expect((160...161).contains(move.ticks))
        var pose = [0.0, 0.0]
        move.sample(tick: move.ticks, tickSeconds: 0.01, into: &pose)
        #expect(pose == [90, 10])
        move.plan(from: [5, 5], to: [5, 5], axes: axes, tickSeconds: 0.01)
        #expect(move.ticks == 0)
    }
}
