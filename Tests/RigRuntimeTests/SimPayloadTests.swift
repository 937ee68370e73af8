import Foundation
import RigTestSupport
import Synchronization
import Testing

@testable import RigCore
@testable import RigRuntime

/// The simulated head: PCA9685 quantization, the servo's lag and deadband, and the camera
/// ringing on the horn as its payload's spring.
@Suite struct SimPayloadTests {
    static func rig(payload: Payload?, servo: ServoImperfection = ServoImperfection()) -> Rig {
        var rig = testRig()
        rig.axes[0].payload = payload
        rig.axes[0].servo = servo
        return rig
    }

    /// Steps the pan axis to `angle` and holds it; returns the camera angle and rate per tick.
    static func step(
        _ rig: Rig, to angle: Double, ticks: Int, config: SimOutputConfig = SimOutputConfig()
    ) throws -> (sim: SimOutput, sent: Double, angles: [Double], rates: [Double]) {
        let sim = SimOutput(config: config, rig: rig)
        try sim.start(channels: rig.axes.map(OutputChannel.init), initial: [rig.axes[0].command(forPosition: 0), .duty(percent: 0)])
        var sent = [Double](repeating: .nan, count: 2)
        var angles: [Double] = []
        var rates: [Double] = []
        for _ in 0..<ticks {
            try sim.write([rig.axes[0].command(forPosition: angle), .duty(percent: 0)], sent: &sent)
            angles.append(sim.cameraMotion.angles[0])
            rates.append(sim.cameraMotion.rates[0])
        }
        return (sim, sent[0], angles, rates)
    }

    @Test func theCameraRingsAtThePayloadsFrequencyAndItsRateIsMeasured() throws {
        let run = try Self.step(Self.rig(payload: Payload(frequencyHz: 3, damping: 0.03)), to: 20, ticks: 600)
        // The horn arrives in 50 ms (400 °/s); the camera overshoots and rings about 20°.
        #expect((run.angles.max() ?? 0) > 21)
        #expect(abs((run.angles.last ?? 0) - 20) < 2)
        #expect(run.sim.rateDegreesPerSecond() ?? 0 > 1, "still ringing after 6 s at ζ 0.03")
        let found = try #require(RingDown.identify(samples: Array(run.rates.dropFirst(10)), sampleSeconds: 0.01))
        #expect(abs(found.frequencyHz / 3 - 1) < 0.05)
        #expect(abs(found.damping - 0.03) < 0.02)
    }

    /// A stall of the loop (a loaded machine) writes nothing for a while: the servo holds
    /// its last pulse and the payload rings on, as a real head does, so the camera after
    /// it is where 40 held writes would have left it. The modelled camera keeps the time
    /// of the write that put it there: a live view drawn meanwhile shows an old pose with
    /// its old time, never a frozen camera at a new one.
    @Test func throughAStallThePayloadRingsOnAndTheCameraKeepsItsTime() throws {
        let rig = Self.rig(payload: Payload(frequencyHz: 3, damping: 0.03))
        let written = try Self.step(rig, to: 20, ticks: 50)
        let stalled = try Self.step(rig, to: 20, ticks: 10)
        let before = try #require(stalled.sim.modelledCameraPose)
        #expect(before.angles[0] == stalled.angles.last)
        let beforeTime = try #require(before.atNanoseconds)
        #expect(stalled.sim.modelledCameraPose == before, "no write, no new pose and no new time")
        stalled.sim.elapsedWithoutWrites(ticks: 40)
        let after = try #require(stalled.sim.modelledCameraPose)
        #expect(after.angles[0] == written.angles.last, "\(after.angles[0]) after the stall, \(written.angles.last ?? .nan) written through")
        #expect(after.angles[0] != before.angles[0])
        #expect(try #require(after.atNanoseconds) > beforeTime)
    }

    /// A measured settle in the loop's status (what DFMoco's `ms` answers): after a move the
    /// loop says `settling` until the head has been measured still for the hold, without a
    /// break, and not while the camera turned faster than the threshold within the hold.
    @Test func theLoopSaysSettlingUntilTheHeadIsMeasuredStill() throws {
        let rig = Self.rig(payload: Payload(frequencyHz: 3, damping: 0.03))
        let sim = SimOutput(config: SimOutputConfig(), rig: rig)
        let output = RecordingOutput(sim)
        var settle = MeasuredSettle(sensor: .sim)
        settle.thresholdDegreesPerSecond = 2
        settle.holdSeconds = 0.2
        settle.timeoutSeconds = 30
        let start = [0.0, 0]
        try output.start(channels: rig.axes.map(OutputChannel.init), initial: rig.axes.indices.map { rig.axes[$0].command(forPosition: start[$0]) })
        let loop = ControlLoop(
            rig: rig, source: CommandSource(rig: rig, startPose: start), output: output, clock: ManualClock(),
            options: LoopOptions(realtime: false), startPose: start, stillness: (sim, settle))
        // Per tick: the camera's rate after the write, and the status the tick before left.
        let samples = Mutex<[(rate: Double, settling: Bool, moving: Bool)]>([])
        output.afterWrite = { [weak loop] n in
            guard let loop else { return }
            let status = loop.status
            samples.withLock { $0.append((abs(sim.cameraMotion.rates[0]), status.settling, status.velocities[0] != 0)) }
            if n == 1500 { loop.mailbox.requestAbort() }
        }
        #expect(loop.status.settling == false, "nothing moved yet")
        loop.mailbox.post(.goTo(pose: [30, nil]))
        _ = loop.run()
        let s = samples.withLock { $0 }
        let hold = Int((settle.holdSeconds / rig.tickSeconds).rounded())
        let began = try #require(s.firstIndex { $0.settling }, "never settling")
        let stopped = try #require(s.lastIndex { $0.moving }, "never moved") + 1
        let still = try #require(s[began...].firstIndex { !$0.settling }, "still settling after 15 s")
        #expect(s[began..<still].allSatisfy { $0.settling }, "a break in the settle")
        #expect(still > stopped + hold, "the move ended at \(stopped), called still at \(still)")
        // Sample k is tick k + 1's rate and tick k's status: the verdict `still` shows is
        // about the hold's ticks before it, all below the threshold (and the one before not).
        #expect(s[(still - hold)..<still].allSatisfy { $0.rate < 2 }, "\(s[(still - hold)..<still].map(\.rate))")
        #expect(s[still - hold - 1].rate >= 2, "the hold began at the last tick above the threshold")
        #expect(s[stopped..<still].contains { $0.rate >= 2 }, "the settle had ringing to wait for")
        #expect(s[still...].allSatisfy { !$0.settling }, "said once still, until the next move")
    }

    /// `rig calibrate resonance` puts a ring-down's samples on the tick grid by their times:
    /// the ticks a stall of the loop missed are gaps, bridged, not time squeezed out (which
    /// identified a faster ringing: 3.18 Hz for 3 on a loaded machine).
    @Test func aRingDownWithStallsIsIdentifiedOnItsTimes() throws {
        let rig = Self.rig(payload: Payload(frequencyHz: 3, damping: 0.03))
        let run = try Self.step(rig, to: 20, ticks: 400)
        let dt = rig.tickSeconds
        let missed = Set(Array(60..<75) + Array(150..<165))
        let samples = run.rates.indices.dropFirst(10).filter { !missed.contains($0) }.map {
            RateSample(timeSeconds: Double($0) * dt, position: 20, rates: SIMD3(run.rates[$0], 0, 0))
        }
        let grid = RateSample.onTickGrid(samples, tickSeconds: dt)
        #expect(grid.count == 390)
        let bridged = try #require(RingDown.bridged(grid.map { $0.x }, maxGap: 25))
        let found = try #require(RingDown.identify(samples: bridged, sampleSeconds: dt))
        #expect(abs(found.frequencyHz / 3 - 1) < 0.05, "\(found)")
        let squeezed = try #require(RingDown.identify(samples: samples.map(\.rates.x), sampleSeconds: dt))
        #expect(abs(squeezed.frequencyHz / 3 - 1) > 0.05, "the stalls squeezed out would pass too: \(squeezed)")
    }

    @Test func withoutAPayloadTheCameraIsTheHornAndNothingRings() throws {
        let run = try Self.step(Self.rig(payload: nil), to: 20, ticks: 100)
        #expect(run.angles.last == 20)
        #expect(run.sim.rateDegreesPerSecond() == 0)
        let commanded: Double = 1500 + 20.0 * 2000 / 180
        #expect(run.sent == commanded, "unmodelled: the pulse as commanded")
    }

    @Test func aModelledServoSendsWholePCA9685Counts() throws {
        let run = try Self.step(Self.rig(payload: Payload(frequencyHz: 3, damping: 0.5)), to: 20.1, ticks: 2)
        let count = 20_000.0 / 4096
        let counts = run.sent / count
        #expect(abs(counts - counts.rounded()) < 1e-9, "\(run.sent) µs is \(counts) counts")
        let commanded: Double = 1500 + 20.1 * 2000 / 180
        #expect(abs(run.sent - commanded) <= count / 2)
    }

    @Test func theDeadbandLeavesASmallErrorAndTheLagDelaysTheMove() throws {
        let rig = Self.rig(payload: nil, servo: ServoImperfection(deadbandDeg: 1, lagSeconds: 0.05))
        // The servo starts on the whole count the start sent for 0° (−0.088° at 50 Hz).
        let start = rig.axes[0].calibration!.angle(forPulseMicroseconds: SimOutput.quantized(pulseMicroseconds: 1500, periodMicroseconds: 20_000))
        #expect(start != 0 && abs(start) < 0.44 / 2)
        let small = try Self.step(rig, to: 0.4, ticks: 50)
        #expect(small.sim.hornPositions[0] == start, "within half the deadband: not corrected")
        let big = try Self.step(rig, to: 10, ticks: 60)
        #expect(big.angles[4] == start, "nothing within the 50 ms lag")
        #expect(big.angles[5] > 0)
        // Stops as soon as the error is inside the band: half the deadband short.
        #expect(abs((big.angles.last ?? 0) - 9.5) < 0.02)
    }

    /// The servo is sent one pulse per PWM period, in counts of that period: at 200 Hz
    /// finer counts; at 50 Hz on a 100 Hz loop a command sent between two periods waits.
    @Test func theServoGetsOnePulsePerPWMPeriodInCountsOfIt() throws {
        let rig = Self.rig(payload: Payload(frequencyHz: 3, damping: 0.5))
        var fast = SimOutputConfig()
        fast.frequencyHz = 200
        let fine = try Self.step(rig, to: 20.1, ticks: 2, config: fast)
        let count = 5_000.0 / 4096
        #expect(abs(fine.sent / count - (fine.sent / count).rounded()) < 1e-9, "\(fine.sent) µs is \(fine.sent / count) counts")
        #expect(abs(fine.sent - (1500 + 20.1 * 2000 / 180)) <= count / 2)

        let sim = SimOutput(config: SimOutputConfig(), rig: rig)
        try sim.start(channels: rig.axes.map(OutputChannel.init), initial: [rig.axes[0].command(forPosition: 0), .duty(percent: 0)])
        var sent = [Double](repeating: .nan, count: 2)
        let halfCount = 20_000.0 / 4096 / 2 * 180 / 2000
        var horn: [Double] = []
        for angle in [1.0, 3, 3, 3] {
            try sim.write([rig.axes[0].command(forPosition: angle), .duty(percent: 0)], sent: &sent)
            horn.append(sim.hornPositions[0])
        }
        #expect(abs(horn[0] - 1) <= halfCount, "the first write begins a period: \(horn)")
        #expect(horn[1] == horn[0], "sent mid-period: the servo still has the last pulse")
        #expect(abs(horn[2] - 3) <= halfCount && horn[3] == horn[2], "\(horn)")
    }
}

/// The one-count trim in the simulated output: on a shaped axis at 200 Hz (a count every
/// tick) it leaves the payload still after a move where the plain counts ring; at 50 Hz it
/// is off and the pulses are the untrimmed ones.
@Suite struct SimOutputTrimTests {
    static func rig(pwmHz: Double, trim: Bool) throws -> (Rig, SimOutputConfig) {
        var rig = testRig(loopRateHz: 200)
        rig.axes[0].payload = Payload(frequencyHz: 3, damping: 0.03)
        rig.axes[0].shaper = ShaperConfig(kind: .zv, frequencyHz: 3, damping: 0.03, trim: trim)
        var config = SimOutputConfig()
        config.frequencyHz = pwmHz
        return (rig, config)
    }

    /// Shaped moves to each of `ends` from 0; per move the camera's rate amplitude a ringing
    /// period after it (°/s), and every pulse sent.
    static func moves(_ rig: Rig, _ config: SimOutputConfig, ends: [Double]) throws -> (left: [Double], sent: [Double]) {
        var left: [Double] = []
        var pulses: [Double] = []
        for end in ends {
            let sim = SimOutput(config: config, rig: rig)
            try sim.start(channels: rig.axes.map(OutputChannel.init), initial: [rig.axes[0].command(forPosition: 0), .duty(percent: 0)])
            var shaper = InputShaper(axes: rig.axes, tickSeconds: rig.tickSeconds, startPose: [0, 0])
            var out = [0.0, 0]
            var sent = [Double](repeating: .nan, count: 2)
            for k in 0..<260 {
                let s = min(Double(k + 1) / 60, 1)
                shaper.shape([end * (1 - cos(Double.pi * s)) / 2, 0], into: &out)
                try sim.write([rig.axes[0].command(forPosition: out[0]), .duty(percent: 0)], sent: &sent)
                pulses.append(sent[0])
            }
            let w = 2 * Double.pi * 3
            let e = sim.cameraMotion.angles[0] - sim.hornPositions[0]
            let v = sim.cameraMotion.rates[0]
            left.append((v * v + w * w * e * e).squareRoot())
        }
        return (left, pulses)
    }

    @Test func at200HzTheTrimStillsWhatTheCountsLeave() throws {
        let ends = stride(from: 20.0, through: 21, by: 0.1).map { $0 }
        let (on, config) = try Self.rig(pwmHz: 200, trim: true)
        let (off, _) = try Self.rig(pwmHz: 200, trim: false)
        let trimmed = try Self.moves(on, config, ends: ends)
        let plain = try Self.moves(off, config, ends: ends)
        // The default settle's threshold is 0.5 °/s; the trim aims below half of it.
        #expect(plain.left.filter { $0 > 0.25 }.count >= ends.count / 3, "the plain counts ring: \(plain.left)")
        for (t, p) in zip(trimmed.left, plain.left) { #expect(t <= max(0.25, p / 2), "\(t) °/s trimmed against \(p)") }
        #expect(trimmed.sent != plain.sent)
    }

    @Test func at50HzTheTrimIsOff() throws {
        let ends = stride(from: 20.0, through: 21, by: 0.25).map { $0 }
        let (on, config) = try Self.rig(pwmHz: 50, trim: true)
        let (off, _) = try Self.rig(pwmHz: 50, trim: false)
        #expect(try Self.moves(on, config, ends: ends).sent == Self.moves(off, config, ends: ends).sent)
    }
}

/// The loop hands the output each planned move's coming pulses when the move starts (a
/// program on the program host, as `rig play` plays it), and they are the pulses it then
/// writes: the trim starts its pulse before the frames stop.
@Suite struct LoopLookAheadTests {
    @Test func theLoopTellsEachMovesPulsesAheadAndTheTrimStartsBeforeTheFramesStop() throws {
        var rig = testRig(loopRateHz: 200)
        rig.axes[0].payload = Payload(frequencyHz: 3, damping: 0.03)
        rig.axes[0].shaper = ShaperConfig(kind: .zv, frequencyHz: 3, damping: 0.03)
        var config = SimOutputConfig()
        config.frequencyHz = 200
        let poses = stride(from: -30.0, through: 30, by: 7.3).map { [$0, 0.0] }
        let steps = poses.enumerated().map { Step(pose: $1, settleSeconds: 0.8, label: "\($0 + 1)") }
        let output = RecordingOutput(SimOutput(config: config, rig: rig))
        try output.start(channels: rig.axes.map(OutputChannel.init), initial: rig.axes.indices.map { rig.axes[$0].command(forPosition: rig.homePose[$0]) })
        let loop = ControlLoop(
            rig: rig,
            source: ProgramHost(
                rig: rig, startPose: rig.homePose, program: HostedProgram(name: "p", motion: .stepped(steps), trigger: .auto), endsWithProgram: true),
            output: output, clock: ManualClock(), options: LoopOptions(realtime: false), startPose: rig.homePose)
        let result = loop.run()
        #expect(result.fault == nil)
        let (writes, expected) = output.log.withLock { ($0.writes, $0.expected) }
        let sent = output.sentByChannel.withLock { $0[0] }
        // Every step's move, the first included (it starts with the program).
        #expect(expected.count == poses.count)
        var trimmedEarly = 0
        for (after, ticks, pulses) in expected {
            var last = 0
            for k in 1...ticks {
                guard case .pulse(let us) = writes[after + k - 1][0], case .pulse(let before) = writes[after + k - 2][0] else { continue }
                if !pulses[k - 1][0].isNaN { #expect(us == pulses[k - 1][0], "tick \(k) of \(ticks)") }
                if us != before { last = k }
            }
            #expect(last == ticks, "the frames stop changing after tick \(ticks)")
            // A pulse sent other than its own whole count while the frames still change.
            for k in 1...ticks {
                guard case .pulse(let us) = writes[after + k - 1][0] else { continue }
                if sent[after + k - 1] != SimOutput.quantized(pulseMicroseconds: us, periodMicroseconds: config.periodMicroseconds) {
                    trimmedEarly += 1
                    break
                }
            }
        }
        #expect(trimmedEarly > 0, "some move's trim starts before its frames stop")
    }
}
