import Foundation
import PropertyBased
import Testing

@testable import RigCore
@testable import RigSky

/// Jerk-limited moves: by-hand durations, and for random moves every sampled frame within
/// velocity, acceleration and jerk (finite differences at the tick rate), exact arrival,
/// all axes arriving on the same tick.
@Suite struct SCurveTests {
    @Test func minimumDurationByHand() {
        // 90° at 90°/s, 180°/s², 1800°/s³: reaching 90°/s takes 90/180 + 180/1800 = 0.6 s and
        // 27°, twice that is 54° ≤ 90°, so it cruises 36° in 0.4 s: 0.6 + 0.4 + 0.6 = 1.6 s
        // (the trapezoid: 1.5 s).
        let t = SCurveProfile.minimumDuration(distance: 90, maxVelocity: 90, maxAcceleration: 180, maxJerk: 1800)
        #expect(abs(t - 1.6) < 1e-12)
        #expect(SCurveProfile.minimumDuration(distance: -90, maxVelocity: 90, maxAcceleration: 180, maxJerk: 1800) == t)
        // 1°: never reaches 180°/s² (jerk only): d = 2·j·(T/4)³ ⇒ T = 4·∛(d/2j).
        let small = SCurveProfile.minimumDuration(distance: 1, maxVelocity: 90, maxAcceleration: 180, maxJerk: 1800)
        #expect(abs(small - 4 * cbrt(1.0 / 3600)) < 1e-12)
        // 20°: reaches 180°/s², not 90°/s: v²/a + v·a/j = d ⇒ v = (−18 + √(18² + 4·180·20))/2.
        let root: Double = (18.0 * 18.0 + 4.0 * 180.0 * 20.0).squareRoot()
        let v: Double = (root - 18.0) / 2.0
        let expected: Double = 2.0 * (v / 180.0 + 0.1)
        let medium = SCurveProfile.minimumDuration(distance: 20, maxVelocity: 90, maxAcceleration: 180, maxJerk: 1800)
        #expect(abs(medium - expected) < 1e-12)
        #expect(SCurveProfile.minimumDuration(distance: 0, maxVelocity: 90, maxAcceleration: 180, maxJerk: 1800) == 0)
    }

    @Test func theFastestMoveRidesALimitInEveryPhase() async {
        // Bang-bang structure, which makes the symmetric S-curve time-optimal: it either
        // cruises at maxVelocity, or never cruises and ramps at full jerk (holding
        // maxAcceleration if it reaches it).
        await propertyCheck(count: 300, input: Self.limits) { distance, vmax, amax, jmax in
            let t = SCurveProfile.minimumDuration(distance: distance, maxVelocity: vmax, maxAcceleration: amax, maxJerk: jmax)
            let p = SCurveProfile(start: 0, distance: distance, duration: t, maxVelocity: vmax, maxAcceleration: amax, maxJerk: jmax)
            #expect(p.jerk == jmax)
            let cruises = p.duration - 2 * p.accelerationSeconds > 1e-9 * p.duration
            if cruises {
                #expect(abs(p.peakVelocity - vmax) <= 1e-12 * vmax)
            } else {
                #expect(p.peakVelocity <= vmax * (1 + 1e-12))
            }
            let ramps = p.accelerationSeconds - 2 * p.rampSeconds > 1e-9 * p.duration
            if ramps { #expect(abs(p.peakAcceleration - amax) <= 1e-12 * amax) }
            // A trapezoid (infinite jerk) is never slower.
            let trapezoid = TrapezoidProfile.minimumDuration(distance: distance, maxVelocity: vmax, maxAcceleration: amax)
            #expect(trapezoid <= t * (1 + 1e-12))
        }
    }

    @Test func stretchedMovesArriveOnTimeWithinLimits() async {
        let stretched = Generator(run: { rng in
            var g = SplitMix64(seed: rng.next())
            return (
                Double.random(in: -300...300, using: &g), Double.random(in: 5...300, using: &g),
                Double.random(in: 10...1000, using: &g), Double.random(in: 1...1000, using: &g),
                Double.random(in: 1...5, using: &g)
            )
        })
        await propertyCheck(count: 300, input: stretched) { distance, vmax, amax, rampPer, stretch in
            let jmax = amax * rampPer
            let minimum = SCurveProfile.minimumDuration(distance: distance, maxVelocity: vmax, maxAcceleration: amax, maxJerk: jmax)
            let p = SCurveProfile(
                start: 3, distance: distance, duration: minimum * stretch,
                maxVelocity: vmax, maxAcceleration: amax, maxJerk: jmax)
            #expect(abs(p.duration - minimum * stretch) <= 1e-12 * p.duration)
            #expect(p.peakVelocity <= vmax * (1 + 1e-12))
            #expect(p.peakAcceleration <= amax * (1 + 1e-12))
            #expect(p.position(at: p.duration) == 3 + distance)
            // Half way in half the time (the profile is symmetric), monotone throughout.
            #expect(abs(p.position(at: p.duration / 2) - (3 + distance / 2)) <= 1e-9 * (abs(distance) + 1))
            let n = 1000
            var last = 3.0
            for k in 1...n {
                let x = p.position(at: p.duration * Double(k) / Double(n))
                #expect((x - last) * distance >= -1e-12)
                last = x
            }
        }
    }

    /// The property the Player, jog and the command source rely on, checked on the frames a
    /// `PoseMove` emits tick by tick, with finite differences at the tick rate (what the
    /// servo sees). Tolerance: 1e-6 relative, the one `LimitMonitor` allows; for jerk also
    /// the rounding of a third difference over dt³ (`LimitMonitor.allowedJerk`), which at
    /// 1 kHz and low jerk limits is larger than 1e-6 relative.
    @Test func everyTickOfARandomMoveIsWithinVelocityAccelerationAndJerk() async {
        let moves = Generator(run: { rng in
            var g = SplitMix64(seed: rng.next())
            let count = Int.random(in: 1...6, using: &g)
            var axes: [Axis] = []
            var from: [Double] = []
            var to: [Double] = []
            for i in 0..<count {
                let amax = Double.random(in: 10...1000, using: &g)
                axes.append(
                    Axis(
                        name: "a\(i)", kind: .servo, channel: i, calibration: nil, home: 0, park: nil,
                        softMin: -180, softMax: 180, maxVelocity: Double.random(in: 5...300, using: &g),
                        maxAcceleration: amax, maxJerk: amax / Double.random(in: 0.001...1, using: &g), idle: .hold))
                from.append(Double.random(in: -180...180, using: &g))
                // Some axes stay put, some move a hair, most move far.
                switch Int.random(in: 0..<6, using: &g) {
                case 0: to.append(from[i])
                case 1: to.append(min(180, from[i] + Double.random(in: 0...0.01, using: &g)))
                default: to.append(Double.random(in: -180...180, using: &g))
                }
            }
            let rate = [50.0, 100, 200, 333, 1000][Int.random(in: 0..<5, using: &g)]
            return (axes, from, to, rate)
        })
        await propertyCheck(count: 300, input: moves) { axes, from, to, rate in
            let dt = 1 / rate
            let move = PoseMove(from: from, to: to, axes: axes, tickSeconds: dt)
            var frames = [from, from, from]  // at rest before the move
            var pose = from
            for k in 0...move.ticks + 3 {
                move.sample(tick: k, tickSeconds: dt, into: &pose)
                frames.append(pose)
            }
            #expect(frames.last == to, "arrives exactly")
            let slowest =
                axes.indices.map {
                    SCurveProfile.minimumDuration(
                        distance: to[$0] - from[$0], maxVelocity: axes[$0].maxVelocity,
                        maxAcceleration: axes[$0].maxAcceleration, maxJerk: axes[$0].maxJerk)
                }.max() ?? 0
            #expect(Double(move.ticks) * dt >= slowest, "no faster than the slowest axis allows")
            #expect(Double(move.ticks - 1) * dt < slowest * (1 + 1e-9) || move.ticks == 0, "whole ticks, rounded up once")
            for i in axes.indices {
                var v0 = 0.0
                var a0 = 0.0
                for k in 3..<frames.count {
                    let v = (frames[k][i] - frames[k - 1][i]) / dt
                    let a = (v - v0) / dt
                    let j = (a - a0) / dt
                    v0 = v
                    a0 = a
                    #expect(abs(v) <= axes[i].maxVelocity * (1 + 1e-6), "axis \(i) tick \(k - 3): v \(v)")
                    #expect(abs(a) <= axes[i].maxAcceleration * (1 + 1e-6), "axis \(i) tick \(k - 3): a \(a)")
                    #expect(
                        abs(j) <= LimitMonitor.allowedJerk(axes[i], tickSeconds: dt),
                        "axis \(i) tick \(k - 3)/\(move.ticks) at \(rate) Hz: j \(j) vs \(axes[i].maxJerk), from \(from[i]) to \(to[i])")
                }
                // Same tick: an axis that moves is still short of its target one tick early.
                if move.ticks > 0, abs(to[i] - from[i]) > 1e-9 {
                    #expect(frames[3 + move.ticks - 1][i] != to[i], "axis \(i) arrived before the others")
                    #expect(frames[3 + move.ticks][i] == to[i])
                }
            }
        }
    }

    @Test func aTrapezoidBreaksTheJerkLimitAndTheMonitorSaysSo() {
        // The round-1 profile: 90° in 1.5 s, acceleration switched on in one tick.
        let axis = servoAxis("pan", channel: 0)
        let trapezoid = TrapezoidProfile(start: 0, distance: 90, duration: 1.5, maxAcceleration: 180)
        var planned = LimitMonitor(axes: [axis], tickSeconds: 0.01, startPose: [0])
        var path = LimitMonitor(axes: [axis], tickSeconds: 0.01, startPose: [0])
        var jerkViolations = 0
        var otherViolations = 0
        for k in 1...160 {
            let x = trapezoid.position(at: Double(k) * 0.01)
            if let v = planned.observe([x], checkingJerk: true) {
                if v.limit == .jerk { jerkViolations += 1 } else { otherViolations += 1 }
            }
            #expect(path.observe([x]) == nil, "jerk is not judged unless asked")
        }
        #expect(jerkViolations > 0)
        #expect(otherViolations == 0)
        // 180°/s² switched on within one 10 ms tick: ≈ 180/0.01 = 18,000°/s³ (the kernel halves it).
        #expect(planned.margins[0].peakJerk > 10 * axis.maxJerk / 2)
        #expect(path.margins[0].peakJerk == 0)
    }

    @Test func stepMovesOfAPlayerStayWithinJerk() throws {
        let rig = simRig([servoAxis("pan", channel: 0), servoAxis("tilt", channel: 1, maxVelocity: 30, maxAcceleration: 60)])
        let steps = [
            Step(pose: [60, -20], settleSeconds: 0.2, label: "shot 1"),
            Step(pose: [-45, 30], settleSeconds: 0, label: "shot 2"),
        ]
        let report = FeasibilityChecker.check(rig: rig, motion: .stepped(steps), startPose: [0, 0])
        #expect(report.feasible, "\(report.problems)")
        for (i, axis) in rig.axes.enumerated() {
            #expect(report.margins[i].peakJerk > 0.5 * axis.maxJerk, "the moves use the jerk they may")
            #expect(report.margins[i].peakJerk <= axis.maxJerk * (1 + 1e-6))
        }
    }

    @Test func maxJerkIsARigKeyWithBoundsAndADefault() throws {
        let rig = try RigParser.parse(
            text: #"{"axes": [{"name": "pan", "channel": 0, "maxAcceleration": 200}, {"name": "tilt", "channel": 1, "maxAcceleration": 200, "maxJerk": 500}]}"#,
            file: "r.json")
        #expect(rig.axes[0].maxJerk == 2000, "default: maxAcceleration over a 0.1 s ramp")
        #expect(rig.axes[1].maxJerk == 500)
        for (jerk, column) in [("100", 76), ("300000", 76), ("-1", 76)] {
            let text = #"{"axes": [{"name": "pan", "channel": 0, "maxAcceleration": 200, "maxJerk": "# + jerk + "}]}"
            do {
                _ = try RigParser.parse(text: text, file: "r.json")
                Issue.record("maxJerk \(jerk) accepted")
            } catch {
                let line = "\(error)"
                #expect(line.hasPrefix("r.json:1:\(column): error: $.axes[0].maxJerk: "), "\(line)")
                if jerk != "-1" { #expect(line.hasSuffix("valid: 200…200000°/s³ (a ramp of 1 ms…1 s)"), "\(line)") }
            }
        }
    }

    static let limits = Generator(run: { rng in
        var g = SplitMix64(seed: rng.next())
        let amax = Double.random(in: 10...1000, using: &g)
        return (
            Double.random(in: -300...300, using: &g), Double.random(in: 5...300, using: &g),
            amax, amax / Double.random(in: 0.001...1, using: &g)
        )
    })
}
