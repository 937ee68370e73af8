import Foundation
import PropertyBased
import RigSky
import Testing

@testable import RigCore
@testable import RigFormat

/// Input shapers: Klipper's impulses, shaping that keeps every limit, and the ringing it
/// removes from a simulated payload.
@Suite struct InputShaperTests {
    @Test(arguments: ShaperConfig.Kind.allCases)
    func impulsesArePositiveSumToOneAndSpanTheirShaper(kind: ShaperConfig.Kind) {
        let shaper = ShaperConfig(kind: kind, frequencyHz: 4, damping: 0.1)
        let impulses = shaper.impulses
        #expect(impulses.allSatisfy { $0.amplitude > 0 })
        #expect(abs(impulses.reduce(0) { $0 + $1.amplitude } - 1) < 1e-12)
        let td = 1 / (4 * (1 - 0.01).squareRoot())
        let span: Double = [.zv: 0.5, .mzv: 0.75, .ei: 1.0, .zvd: 1.0][kind] ?? 0
        #expect(abs(shaper.durationSeconds - span * td) < 1e-12)
    }

    @Test func zvMatchesKlipper() {
        // ZV at 5 Hz, ζ 0.1: K = e^(−0.1π/√0.99), A = [1, K]/(1 + K), T = [0, ½t_d].
        let k = exp(-0.1 * Double.pi / 0.99.squareRoot())
        let impulses = ShaperConfig(kind: .zv, frequencyHz: 5, damping: 0.1).impulses
        #expect(abs(impulses[0].amplitude - 1 / (1 + k)) < 1e-12)
        #expect(abs(impulses[1].amplitude - k / (1 + k)) < 1e-12)
        #expect(abs(impulses[1].seconds - 0.5 / (5 * 0.99.squareRoot())) < 1e-12)
    }

    @Test func aShapedStepArrivesAndRestsExactlyOnTheReference() {
        var axis = servoAxis("pan", channel: 0)
        axis.shaper = ShaperConfig(kind: .ei, frequencyHz: 3, damping: 0.05)
        var shaper = InputShaper(axes: [axis], tickSeconds: 0.01, startPose: [0])
        var out = [0.0]
        var outputs: [Double] = []
        for _ in 0..<(shaper.tailTicks + 5) {
            shaper.shape([10], into: &out)
            outputs.append(out[0])
        }
        // A staircase of the impulses' sums, monotonic, exactly 10 once the tail has passed.
        #expect(zip(outputs, outputs.dropFirst()).allSatisfy { $0 <= $1 })
        #expect(outputs[0] > 0 && outputs[0] < 10)
        #expect(outputs[shaper.tailTicks] == 10)
        #expect(outputs[shaper.tailTicks - 1] < 10)
    }

    /// The ringing a move leaves on a payload, as the peak camera error after the shaped
    /// move has arrived.
    static func residual(shaper: ShaperConfig?, payload: Payload, distance: Double = 30, jerkRampSeconds: Double? = nil) -> Double {
        var axis = servoAxis("pan", channel: 0, maxVelocity: 200, maxAcceleration: 2000)
        axis.shaper = shaper
        if let jerkRampSeconds { axis.maxJerk = axis.maxAcceleration / jerkRampSeconds }
        let rig = simRig([axis])
        let run = drive(rig: rig, motion: .stepped([Step(pose: [distance], settleSeconds: 0, label: "1")]), startPose: [0])
        var camera = PayloadResponse(payload: payload, tickSeconds: rig.tickSeconds, angle: 0)
        var peak = 0.0
        let arrived = run.events.first { if case .ready = $0.event { true } else { false } }?.tick ?? run.frames.count
        for (tick, frame) in run.frames.enumerated() {
            camera.step(horn: frame[0])
            if tick >= arrived { peak = max(peak, abs(camera.angle - distance)) }
        }
        for _ in 0..<300 {
            camera.step(horn: distance)
            peak = max(peak, abs(camera.angle - distance))
        }
        return peak
    }

    @Test(arguments: ShaperConfig.Kind.allCases)
    func aShaperAtThePayloadsFrequencyRemovesItsRinging(kind: ShaperConfig.Kind) {
        let payload = Payload(frequencyHz: 3, damping: 0.03)
        let unshaped = Self.residual(shaper: nil, payload: payload)
        let shaped = Self.residual(shaper: ShaperConfig(kind: kind, frequencyHz: 3, damping: 0.03), payload: payload)
        #expect(unshaped > 1, "an unshaped 30° step should ring (\(unshaped)°)")
        #expect(shaped < 0.05 * unshaped, "\(kind): \(shaped)° left of \(unshaped)°")
    }

    @Test(arguments: ShaperConfig.Kind.allCases)
    func aShapedTrapezoidLeavesNextToNoRinging(kind: ShaperConfig.Kind) {
        // The shaper smooths a trapezoid's acceleration steps: on frequency, planning the
        // move without a jerk ramp leaves (next to) nothing either.
        let payload = Payload(frequencyHz: 3, damping: 0.03)
        let unshaped = Self.residual(shaper: nil, payload: payload)
        let shaper = ShaperConfig(kind: kind, frequencyHz: 3, damping: 0.03)
        let trapezoid = Self.residual(shaper: shaper, payload: payload, jerkRampSeconds: Axis.shapedJerkRampSeconds)
        // EI leaves up to 5 % of the move's excitation by design, and a trapezoid excites
        // more than the unshaped S-curve it is compared with.
        #expect(trapezoid < (kind == .ei ? 0.1 : 0.05) * unshaped, "\(kind): \(trapezoid)° left of \(unshaped)°")
    }

    @Test func eiToleratesAFrequency20PercentOff() {
        let payload = Payload(frequencyHz: 3, damping: 0.03)
        let unshaped = Self.residual(shaper: nil, payload: payload)
        let shaped = Self.residual(shaper: ShaperConfig(kind: .ei, frequencyHz: 3.6, damping: 0.03), payload: payload)
        #expect(shaped < 0.25 * unshaped, "\(shaped)° left of \(unshaped)°")
    }

    @Test func shapedProgramsAreCheckedAndPlottedShaped() {
        var axis = servoAxis("pan", channel: 0)
        let steps = Motion.stepped([Step(pose: [40], settleSeconds: 0.2, label: "1"), Step(pose: [-20], settleSeconds: 0.2, label: "2")])
        let plain = FeasibilityChecker.check(rig: simRig([axis]), motion: steps, startPose: [0])
        axis.shaper = ShaperConfig(kind: .mzv, frequencyHz: 2, damping: 0.05)
        let shaped = FeasibilityChecker.check(rig: simRig([axis]), motion: steps, startPose: [0])
        #expect(plain.feasible && shaped.feasible)
        // Each of the three moves (two steps and the park) arrives ¾ t_d later: the shaped
        // output's arrival. The park has no length: unshaped it still took its one tick.
        let tail = InputShaper(axes: [axis], tickSeconds: 0.01, startPose: [0]).tailTicks
        #expect(shaped.ticks == plain.ticks + 3 * tail - 1, "tail \(tail)")
    }
}

/// Shaping cannot break a limit: every shaped frame of a program the checker accepted is
/// within every soft limit, velocity and acceleration, and the loop's limiter never has
/// to bend one — over random rigs, programs and shapers, S-curves and (a shaped axis's
/// default) trapezoids.
@Suite struct ShapedLimitPropertyTests {
    @Test func shapedFeasibleProgramsKeepEveryLimit() async {
        var checked = 0
        let input = Generator(run: { rng in (Scenario.make(seed: rng.next(), stepped: nil), rng.next()) })
        await propertyCheck(count: 300, input: input) { s, shaperSeed in
            guard FeasibilityChecker.check(rig: s.rig, motion: s.motion, startPose: s.startPose).feasible else { return }
            var g = SplitMix64(seed: shaperSeed)
            var rig = s.rig
            for i in rig.axes.indices where Double.random(in: 0..<1, using: &g) < 0.8 {
                let kind = ShaperConfig.Kind.allCases.randomElement(using: &g) ?? .zv
                rig.axes[i].shaper = ShaperConfig(
                    kind: kind, frequencyHz: Double.random(in: 0.5...20, using: &g), damping: Double.random(in: 0...0.5, using: &g))
                // Half of them plan trapezoids, as a shaped axis does by default.
                if Double.random(in: 0..<1, using: &g) < 0.5 { rig.axes[i].maxJerk = rig.axes[i].maxAcceleration / Axis.shapedJerkRampSeconds }
            }
            checked += 1
            let run = drive(rig: rig, motion: s.motion, startPose: s.startPose)
            let excess = LimitExcess(frames: run.frames, rig: rig, startPose: s.startPose)
            #expect(excess.relative <= 2e-6, "\(s) shaped: \(excess)")
            var limiter = MotionLimiter(axes: rig.axes, tickSeconds: rig.tickSeconds, startPose: s.startPose)
            var bent = 0
            for frame in run.frames {
                var f = frame
                if limiter.limit(&f) != nil { bent += 1 }
            }
            #expect(bent == 0, "\(s) shaped: the limiter bent \(bent) frames")
            #expect(run.events.last?.event == .finished)
            let report = FeasibilityChecker.check(rig: rig, motion: s.motion, startPose: s.startPose)
            #expect(report.feasible, "\(s) shaped: \(report.problems.first.map { "\($0)" } ?? "")")
        }
        #expect(checked > 50)
    }
}
