import Foundation
import PropertyBased
import RigSky
import Testing

@testable import RigCore
@testable import RigFormat

/// A step's shot waits until the head is measured still, or the timeout and fixed settle.
@Suite struct MeasuredSettleTests {
    static func camera(_ settle: MeasuredSettle) -> ShootingPlan {
        var plan = ShootingPlan(
            timing: ShotTiming(focusSeconds: 0, shutterHoldSeconds: 0.1, exposureWindowSeconds: 0.2, afterShotSeconds: 0, shotsPerStep: 1), selfTimed: true)
        plan.measuredSettle = settle
        return plan
    }

    @Test func theShotWaitsForStillnessThenStartsTheTickAfterItIsReported() {
        var settle = MeasuredSettle(sensor: .sim)
        settle.timeoutSeconds = 5
        let rig = simRig([servoAxis("pan", channel: 0)])
        var player = Player(
            rig: rig, motion: .stepped([Step(pose: [10], settleSeconds: 0.5, label: "1")]), startPose: [0], shooting: Self.camera(settle))
        var frame = [0.0]
        var events: [(Int, PlayerEvent)] = []
        var stillFrom: Int?
        for tick in 0..<2000 where !player.isFinished {
            // Still from 0.3 s after the move arrived (the player is settling by then).
            if case .settling = player.phase, stillFrom == nil { stillFrom = tick + 30 }
            player.measured(still: stillFrom.map { tick >= $0 } ?? false)
            if let event = player.tick(into: &frame) {
                events.append((tick, event))
                if case .ready = event { player.advance() }
            }
        }
        let settled = events.first { if case .settled = $0.1 { true } else { false } }
        let started = events.first { if case .shot(.started) = $0.1 { true } else { false } }
        guard let settled, let started, case .settled(0, let seconds, true) = settled.1 else {
            Issue.record("no measured settle: \(events)")
            return
        }
        #expect(abs(seconds - 0.31) < 1e-9, "measured \(seconds) s")
        #expect(started.0 == settled.0 + 1)
        #expect(settled.0 >= stillFrom ?? .max)
    }

    @Test func neverStillTimesOutAndFallsBackToTheFixedSettle() {
        var settle = MeasuredSettle(sensor: .sim)
        settle.timeoutSeconds = 0.2
        let rig = simRig([servoAxis("pan", channel: 0)])
        var player = Player(
            rig: rig, motion: .stepped([Step(pose: [10], settleSeconds: 0.5, label: "1")]), startPose: [0], shooting: Self.camera(settle))
        var frame = [0.0]
        var result: (Double, Bool)?
        for _ in 0..<2000 where !player.isFinished {
            player.measured(still: false)
            if case .settled(_, let seconds, let measured)? = player.tick(into: &frame) { result = (seconds, measured) }
            if player.phase.isWaiting { player.advance() }
        }
        // The timeout passed before the fixed settle had: the fixed settle decides.
        #expect(result?.0 == 0.5)
        #expect(result?.1 == false)
    }

    @Test func theDetectorNeedsTheWholeHoldBelowTheThreshold() {
        var d = StillnessDetector(thresholdDegreesPerSecond: 1, holdSeconds: 0.05)
        for _ in 0..<4 { d.observe(rateDegreesPerSecond: 0.5, seconds: 0.01) }
        #expect(!d.isStill)
        d.observe(rateDegreesPerSecond: 0.5, seconds: 0.01)
        #expect(d.isStill)
        d.observe(rateDegreesPerSecond: -1.5, seconds: 0.01)
        #expect(!d.isStill)
        d.observe(rateDegreesPerSecond: .nan, seconds: 0.01)
        #expect(d.quietSeconds == 0)
    }

    @Test func aNoisyRingDownIdentifiesItsPayload() {
        var g = SplitMix64(seed: 36)
        for (f, z) in [(3.0, 0.03), (5.0, 0.03), (1.5, 0.1), (8.0, 0.05)] {
            var camera = PayloadResponse(payload: Payload(frequencyHz: f, damping: z), tickSeconds: 0.002, angle: 0)
            var rates: [Double] = []
            for k in 0..<3000 {
                camera.step(horn: k < 5 ? 0 : 20)
                // Gyro noise of 0.5 °/s (an MPU-6050 at ±250 °/s is about 0.05 °/s rms: ten times worse).
                rates.append(camera.rate + Double.random(in: -0.5...0.5, using: &g))
            }
            let found = RingDown.identify(samples: Array(rates.dropFirst(10)), sampleSeconds: 0.002)
            #expect(found != nil)
            guard let found else { continue }
            #expect(abs(found.frequencyHz / f - 1) < 0.05, "\(f) Hz found as \(found.frequencyHz)")
            #expect(abs(found.damping - z) < 0.02, "ζ \(z) found as \(found.damping)")
        }
    }

    /// A timeout sized to the payload: the simulated camera's rate after a step of one
    /// count last exceeds the threshold within the ring-down time, and less than a ringing
    /// period before it (the envelope's bound).
    /// A ring-down with short gaps (a late live-view frame, a dropped bus read) is bridged
    /// and still identified; gaps too long, too many or at either end are refused.
    @Test func shortGapsInARingDownAreBridgedLongOnesAreNot() throws {
        let dt = 0.01
        let truth = (0..<300).map { k in
            let t = Double(k) * dt
            return 20 * exp(-0.05 * 2 * .pi * 4 * t) * sin(2 * .pi * 4 * t * (1 - 0.05 * 0.05).squareRoot())
        }
        var gappy = truth
        for start in [40, 120, 200] { for k in start..<(start + 8) { gappy[k] = .nan } }
        let bridged = try #require(RingDown.bridged(gappy, maxGap: 25))
        #expect(bridged.allSatisfy { $0.isFinite })
        #expect(zip(bridged, truth).enumerated().allSatisfy { !gappy[$0.offset].isFinite || $0.element.0 == $0.element.1 })
        let found = try #require(RingDown.identify(samples: bridged, sampleSeconds: dt))
        #expect(abs(found.frequencyHz / 4 - 1) < 0.05, "\(found)")
        var long = truth
        for k in 100..<130 { long[k] = .nan }
        #expect(RingDown.bridged(long, maxGap: 25) == nil)
        var many = truth
        for k in stride(from: 10, to: 290, by: 7) { many[k] = .nan }
        #expect(RingDown.bridged(many, maxGap: 25) == nil)
        var atStart = truth
        atStart[0] = .nan
        #expect(RingDown.bridged(atStart, maxGap: 25) == nil)
        #expect(RingDown.bridged(truth, maxGap: 25) == truth)
    }

    @Test(arguments: [3.0, 5.0]) func ringDownSecondsBoundsTheLastRateAboveTheThreshold(frequency: Double) {
        let payload = Payload(frequencyHz: frequency, damping: 0.03)
        let count = 20_000.0 / 4096 * 180 / 2000
        let seconds = payload.ringDownSeconds(amplitudeDegrees: count, belowDegreesPerSecond: 0.272)
        var camera = PayloadResponse(payload: payload, tickSeconds: 0.001, angle: 0)
        var last = 0.0
        for tick in 1...10_000 {
            camera.step(horn: count)
            if abs(camera.rate) >= 0.272 { last = Double(tick) * 0.001 }
        }
        #expect(last <= seconds + 0.01 && last > seconds - payload.dampedPeriodSeconds, "last above at \(last) s, bound \(seconds) s")
        #expect(payload.ringDownSeconds(amplitudeDegrees: 0.001, belowDegreesPerSecond: 0.272) == 0)
    }
}

/// No shot starts while the measured motion is above the threshold: over random rigs,
/// payloads and programs, a simulated payload rings on the played frames, a noisy gyro
/// measures it, and every shot that starts after a measured settle started with the
/// detector still — and most steps were measured still (the property is not vacuous).
@Suite struct MeasuredSettlePropertyTests {
    @Test func noShotStartsWhileTheHeadMoves() async {
        var measuredSteps = 0
        var allSteps = 0
        await propertyCheck(count: 60, input: Generator(run: { rng in rng.next() })) { seed in
            var g = SplitMix64(seed: seed)
            var s = Scenario.make(seed: g.next(), stepped: true)
            for i in s.rig.axes.indices {
                s.rig.axes[i].payload = Payload(
                    frequencyHz: Double.random(in: 1...10, using: &g), damping: Double.random(in: 0.01...0.2, using: &g))
            }
            var settle = MeasuredSettle(sensor: .sim)
            settle.thresholdDegreesPerSecond = Double.random(in: 0.2...2, using: &g)
            settle.holdSeconds = Double.random(in: 0...0.2, using: &g)
            settle.timeoutSeconds = Double.random(in: 0.5...4, using: &g)
            let noise = settle.thresholdDegreesPerSecond * Double.random(in: 0...0.5, using: &g)
            var player = Player(rig: s.rig, motion: s.motion, startPose: s.startPose, shooting: MeasuredSettleTests.camera(settle))
            var cameras = s.rig.axes.indices.map { PayloadResponse(payload: s.rig.axes[$0].payload!, tickSeconds: s.rig.tickSeconds, angle: s.startPose[$0]) }
            var detector = StillnessDetector(settle)
            var frame = s.startPose
            var lastSettleMeasured = false
            var ticks = 0
            while !player.isFinished, ticks < 400_000 {
                ticks += 1
                let stillBefore = detector.isStill
                let rateBefore = cameras.map(\.rate)
                let event = player.tick(into: &frame)
                switch event {
                case .settled(_, _, let measured)?:
                    lastSettleMeasured = measured
                    allSteps += 1
                    if measured { measuredSteps += 1 }
                case .shot(.started(let step, 1))?:
                    if lastSettleMeasured {
                        #expect(stillBefore, "seed \(seed): step \(step) shot while the camera turned at \(rateBefore) °/s")
                    }
                case .ready?: player.advance()
                default: break
                }
                var sum = 0.0
                for i in cameras.indices {
                    cameras[i].step(horn: frame[i])
                    let r = cameras[i].rate + Double.random(in: -noise...noise, using: &g)
                    sum += r * r
                }
                detector.observe(rateDegreesPerSecond: sum.squareRoot(), seconds: s.rig.tickSeconds)
                player.measured(still: detector.isStill)
            }
            #expect(player.isFinished, "seed \(seed): did not finish")
        }
        #expect(measuredSteps > allSteps / 2, "\(measuredSteps) of \(allSteps) steps measured still")
    }
}

/// The envelope verdict (`RingingEnvelope`): with the ringing's frequency known, still
/// after a quarter period of readings instead of half a period's hold — and never while
/// the head's true motion is above the threshold, with a frequency off by up to 20 % and
/// a noisy gyro.
@Suite struct RingingEnvelopeTests {
    /// A 3-axis gyro on a ringing head: each component its own amplitude and phase at one
    /// frequency, decaying; noise per component.
    struct Ringing {
        var amplitudes: [Double]
        var phases: [Double]
        var frequencyHz: Double
        var damping: Double

        func rates(at t: Double) -> [Double] {
            let w = 2 * Double.pi * frequencyHz
            let decay = exp(-damping * w * t)
            return amplitudes.indices.map { amplitudes[$0] * decay * sin(w * t + phases[$0]) }
        }
        /// The largest magnitude the rate reaches from `t` on (sampled finely over a period).
        func peak(from t: Double) -> Double {
            (0..<400).map { k in magnitude(rates(at: t + Double(k) / 400 / frequencyHz)) }.max() ?? 0
        }
    }

    static func magnitude(_ v: [Double]) -> Double { v.reduce(0) { $0 + $1 * $1 }.squareRoot() }

    @Test func theBoundNeverFallsBelowWhatTheRingingStillReaches() async {
        await propertyCheck(count: 300, input: Generator(run: { rng in rng.next() })) { seed in
            var g = SplitMix64(seed: seed)
            let f = Double.random(in: 1...10, using: &g)
            let ringing = Ringing(
                amplitudes: (0..<3).map { _ in Double.random(in: 0...2, using: &g) },
                phases: (0..<3).map { _ in Double.random(in: 0...(2 * Double.pi), using: &g) },
                frequencyHz: f, damping: Double.random(in: 0...0.1, using: &g))
            // The shaper's frequency, up to 20 % off the head's.
            let known = f * Double.random(in: 0.8...1.2, using: &g)
            let dt = [0.002, 0.005, 0.01].randomElement(using: &g) ?? 0.005
            guard var envelope = RingingEnvelope(frequencyHz: known, sampleSeconds: dt) else { return }
            for n in 0..<300 {
                let t = Double(n) * dt
                let bound = envelope.push(Self.magnitude(ringing.rates(at: t)))
                if n < envelope.lag {
                    #expect(bound == .infinity)
                } else {
                    #expect(bound >= ringing.peak(from: t) * (1 - 1e-9), "seed \(seed) at \(t) s: bound \(bound) < \(ringing.peak(from: t))")
                }
            }
        }
    }

    @Test func stillAQuarterPeriodAfterTheMotionWhereTheHoldTakesHalf() {
        // A 3 Hz ringing at a quarter of the threshold, read every 5 ms from the moment
        // motion ends.
        let rig = simRig([servoAxisShaped(frequencyHz: 3)], loopRateHz: 200)
        var settle = MeasuredSettle(sensor: .sim)
        settle.thresholdDegreesPerSecond = 1
        settle.holdSeconds = 1.0 / 6
        var envelope = StillnessDetector(settle, rig: rig)
        var hold = StillnessDetector(settle)
        #expect(envelope.envelope != nil && hold.envelope == nil)
        let ringing = Ringing(amplitudes: [0.25, 0, 0], phases: [0.3, 0, 0], frequencyHz: 3, damping: 0.03)
        var stillAt: (envelope: Int?, hold: Int?)
        envelope.commanded(moving: true)
        for n in 0..<100 {
            let rate = Self.magnitude(ringing.rates(at: Double(n) * 0.005))
            envelope.commanded(moving: false)
            if envelope.observe(rateDegreesPerSecond: rate, seconds: 0.005), stillAt.envelope == nil { stillAt.envelope = n + 1 }
            if hold.observe(rateDegreesPerSecond: rate, seconds: 0.005), stillAt.hold == nil { stillAt.hold = n + 1 }
        }
        let lag = envelope.envelope?.lag ?? 0
        #expect(lag == 17)  // 1/(4·3 Hz) = 16.7 readings of 5 ms
        #expect(stillAt.envelope == lag + 1 + max(2, lag / 4) - 1)
        #expect(stillAt.hold == 34)
        // Commanded motion starts it again; a NaN too.
        envelope.commanded(moving: true)
        #expect(!envelope.isStill)
        envelope.observe(rateDegreesPerSecond: 0, seconds: 0.005)
        #expect(!envelope.isStill)
    }

    @Test func theLiveViewAndMixedFrequenciesKeepTheHold() {
        var imu = MeasuredSettle(sensor: .imu)
        let one = simRig([servoAxisShaped(frequencyHz: 3), servoAxisShaped(frequencyHz: 3.01)])
        #expect(one.settleRingingHz(imu) == 3)
        #expect(simRig([servoAxisShaped(frequencyHz: 3), servoAxisShaped(frequencyHz: 5)]).settleRingingHz(imu) == nil)
        #expect(simRig([servoAxis("pan", channel: 0)]).settleRingingHz(imu) == nil)
        imu.sensor = .liveView
        #expect(one.settleRingingHz(imu) == nil)
        // Readings too sparse for the frequency (a 10 Hz ringing read at 20 Hz): no envelope.
        #expect(RingingEnvelope(frequencyHz: 10, sampleSeconds: 0.05) == nil)
    }

    /// No shot starts while the true motion is above the threshold: a ringing head, its
    /// shaper up to 20 % off, a gyro with Gaussian noise (σ up to 0.5 °/s per axis at
    /// 200 Hz, the bench's worst); whenever the envelope says still, the head's true rate
    /// is below the threshold. With σ small it does say still (the check is not vacuous).
    @Test func aNoisyGyroNeverPassesAMovingHeadAsStill() async {
        var verdicts = 0
        await propertyCheck(count: 200, input: Generator(run: { rng in rng.next() })) { seed in
            var g = SplitMix64(seed: seed)
            let f = Double.random(in: 2...8, using: &g)
            let threshold = Double.random(in: 0.2...1, using: &g)
            let sigma = [0.5, 0.1, 0.02, Double.random(in: 0...0.5, using: &g)].randomElement(using: &g) ?? 0.5
            let ringing = Ringing(
                amplitudes: (0..<3).map { _ in Double.random(in: 0...(3 * threshold), using: &g) },
                phases: (0..<3).map { _ in Double.random(in: 0...(2 * Double.pi), using: &g) },
                frequencyHz: f, damping: Double.random(in: 0.01...0.1, using: &g))
            let rig = simRig([servoAxisShaped(frequencyHz: f * Double.random(in: 0.8...1.2, using: &g))], loopRateHz: 200)
            var settle = MeasuredSettle(sensor: .imu)
            settle.thresholdDegreesPerSecond = threshold
            var detector = StillnessDetector(settle, rig: rig)
            for n in 0..<1600 {
                let t = Double(n) * 0.005
                let truth = ringing.rates(at: t)
                let measured = truth.map { $0 + sigma * g.gaussian() }
                if detector.observe(rateDegreesPerSecond: Self.magnitude(measured), seconds: 0.005) {
                    verdicts += 1
                    #expect(
                        Self.magnitude(truth) < threshold,
                        "seed \(seed): still at \(t) s while the head turns at \(Self.magnitude(truth)) °/s (f \(f) Hz, σ \(sigma), threshold \(threshold), \(ringing))"
                    )
                }
            }
        }
        #expect(verdicts > 1000)
    }
}

/// A servo axis shaped at `frequencyHz` (zv, ζ 0.03).
func servoAxisShaped(frequencyHz: Double) -> Axis {
    var axis = servoAxis("pan", channel: 0)
    axis.shaper = ShaperConfig(kind: .zv, frequencyHz: frequencyHz, damping: 0.03)
    return axis
}
