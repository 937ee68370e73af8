import Foundation
import Logging
import RigCore
import RigPCA9685
import RigRuntime
import RigTestSupport
import Testing

/// `"settle": {"sensor": "imu"}` in a played program, on real drivers down to the bytes:
/// the PCA9685 output and the MPU-6050 on one fake bus, the IMU model's camera a spring on
/// the horn the PCA9685 model's channel 0 commands, with noise and the chip's own offset.
@Suite struct IMUSettleTests {
    static let threshold = 0.5
    static let hold = 0.1

    static func rigText(address: String = "0x68", shaped: Bool = false) -> String {
        """
        {
          "name": "bench head",
          "output": {"type": "pca9685", "bus": "/dev/i2c-fake"},
          "imu": {"bus": "/dev/i2c-fake", "address": "\(address)"},
          "settle": {"sensor": "imu", "thresholdDegPerS": \(threshold), "holdSeconds": \(hold), "timeoutSeconds": 3},
          "axes": [
            {"name": "pan", "channel": 0, "pulseUs": [1000, 2000], "angleDeg": [-90, 90], "home": 0,
             "maxVelocity": 180, "maxAcceleration": 2000\(shaped ? #", "shaper": {"type": "zv", "frequencyHz": 3, "damping": 0.15}"# : "")}
          ]
        }
        """
    }

    /// Records, per loop tick, the true rate of the modelled camera just after the gyro was
    /// read (the model steps its spring once per read).
    final class Recording: StillnessProbe {
        let inner: RateSensorStillness
        let chip: MPU6050Model
        var truth: [Double] = []
        init(_ inner: RateSensorStillness, chip: MPU6050Model) {
            self.inner = inner
            self.chip = chip
        }
        func startMeasuring() throws(PartStartFailure) -> String? { try inner.startMeasuring() }
        func stopMeasuring() { inner.stopMeasuring() }
        func rateDegreesPerSecond() -> Double? {
            let rate = inner.rateDegreesPerSecond()
            truth.append(abs(chip.follow?.response.rate ?? .nan))
            return rate
        }
    }

    struct Run {
        var summary: Result<SessionSummary, SessionError>
        var lines: [String]
        var truth: [Double]
        var log: EventLog
        var tickSeconds: Double
    }

    static func play(address: String = "0x68", offset: SIMD3<Double>, shaped: Bool = false) throws -> Run {
        let rig = try RigParser.parse(text: rigText(address: address, shaped: shaped), file: "head.json")
        let log = EventLog()
        let bus = PCA9685Model(log: log)
        let chip = MPU6050Model(log: log)
        bus.attach(chip, at: 0x68)
        chip.offset = offset
        chip.follow = (
            horn: {
                // Channel 0's pulse (50 Hz: 20 000 µs over 4096 counts) on the file's line.
                let us = Double(bus.highCounts(0)) / 4096 * 20_000
                return us == 0 ? 0 : (us - 1500) / 500 * 90
            }, response: PayloadResponse(payload: Payload(frequencyHz: 3, damping: 0.15), tickSeconds: rig.tickSeconds, angle: 0), noiseDps: 0.05
        )
        var config = PCA9685OutputConfig()
        // A lock name of its own: the sessions here and the resonance test's lock their buses.
        config.bus = "\(bus.path)-settle-\(address)\(shaped ? "-shaped" : "")"
        let logs = CapturedLogs()
        let output = PCA9685Output(config: config, bus: bus, stateDirectory: nil, logger: logs.logger)
        let imu = MPU6050(config: try MPU6050Config.parse(try #require(rig.imu)), bus: bus)
        let probe = Recording(RateSensorStillness(sensor: imu, pause: {}), chip: chip)
        var options = SessionOptions(loop: LoopOptions(realtime: false))
        options.trapSignals = false
        options.stopOnStreamFailure = false
        options.stillness = probe
        var plan = ShootingPlan.none
        plan.measuredSettle = rig.settle
        let steps = [10.0, -10, 5].enumerated().map { Step(pose: [$0.element], settleSeconds: 0.5, label: "\($0.offset + 1)") }
        let program = HostedProgram(name: "three", motion: .stepped(steps), trigger: .auto, shots: plan)
        let session = RigSession(
            rig: rig, source: ProgramHost(rig: rig, startPose: [0], program: program, endsWithProgram: true), output: output, startPose: [0],
            trigger: nil, options: options, logger: logs.logger, clock: ManualClock())
        let summary = Result { () throws(SessionError) in try session.run() }
        return Run(summary: summary, lines: logs.all, truth: probe.truth, log: log, tickSeconds: rig.tickSeconds)
    }

    /// Every step measured still (the chip's 2 °/s offset subtracted: without that nothing
    /// would ever read below 0.5 °/s), and at each verdict the camera had truly turned
    /// slower than the threshold for the hold — after it had rung above it.
    @Test func eachStepWaitsUntilTheGyroSaysTheCameraIsStill() throws {
        let run = try Self.play(offset: SIMD3(2, -1.5, 0.8))
        let summary = try run.summary.get()
        #expect(summary.exitCode == 0)
        #expect(run.lines.contains { $0.contains("offset (2.0") }, "\(run.lines)")
        let verdicts = run.lines.filter { $0.contains("measured still") }
        #expect(verdicts.count == 3, "\(run.lines)")
        #expect(!verdicts.contains { $0.contains("not measured still") }, "\(verdicts)")
        let dt = run.tickSeconds
        let holdTicks = Int((Self.hold / dt).rounded())
        var previous = 0
        for line in verdicts {
            let time = try #require(line.components(separatedBy: "t=").dropFirst().first?.components(separatedBy: "s ").first.flatMap { Double($0) }, "\(line)")
            let tick = Int((time / dt).rounded())
            try #require(tick - holdTicks + 2 > previous && tick - 1 < run.truth.count, "\(line)")
            // Still by the truth over the hold that ended at the verdict (a tick's slack at
            // each end; the noise is 0.05 °/s against a 0.5 °/s threshold)…
            let window = run.truth[(tick - holdTicks + 2)...(tick - 1)]
            #expect(window.allSatisfy { $0 < Self.threshold }, "\(line): \(window.max() ?? 0) °/s in its hold")
            // … after the camera rang above the threshold since the last verdict (the wait was not vacuous).
            #expect((run.truth[previous..<tick].max() ?? 0) > Self.threshold * 4, "\(line)")
            previous = tick
        }
    }

    /// With a shaper at the payload's frequency the loop judges by the ringing's envelope:
    /// every step measured still, and at each verdict the camera truly turned slower than
    /// the threshold over the readings the verdict stood on — after it had rung above it.
    @Test func withAShaperTheEnvelopeDecidesAndIsRight() throws {
        let run = try Self.play(offset: SIMD3(2, -1.5, 0.8), shaped: true)
        #expect(try run.summary.get().exitCode == 0)
        let verdicts = run.lines.filter { $0.contains("measured still") }
        #expect(!verdicts.contains { $0.contains("not measured still") }, "\(verdicts)")
        // Every step measured still (a step seen moving again after its verdict is measured
        // on and says so again).
        for step in 1...3 { #expect(verdicts.contains { $0.contains("step \(step)/3 ") }, "\(verdicts)") }
        let dt = run.tickSeconds
        // A quarter period of 3 Hz in readings, and the envelope's readings in a row.
        let lag = Int((1 / (4 * 3 * dt)).rounded())
        let hold = max(2, lag / 4)
        var previous = (tick: 0, step: "")
        for line in verdicts {
            let time = try #require(line.components(separatedBy: "t=").dropFirst().first?.components(separatedBy: "s ").first.flatMap { Double($0) }, "\(line)")
            let step = line.components(separatedBy: " measured").first?.components(separatedBy: " step ").last ?? ""
            let tick = Int((time / dt).rounded())
            try #require(tick - hold + 1 > previous.tick && tick - 1 < run.truth.count, "\(line)")
            let window = run.truth[(tick - hold + 1)...(tick - 1)]
            #expect(window.allSatisfy { $0 < Self.threshold }, "\(line): \(window.max() ?? 0) °/s at the verdict")
            // A new step's verdict came after the camera turned above the threshold (its move).
            if step != previous.step { #expect((run.truth[previous.tick..<tick].max() ?? 0) > Self.threshold, "\(line)") }
            previous = (tick, step)
        }
    }

    /// An IMU that does not answer refuses the run before the output starts: the PCA9685
    /// was never written.
    @Test func anIMUThatDoesNotAnswerRefusesTheRunBeforeAnythingMoves() throws {
        let run = try Self.play(address: "0x69", offset: SIMD3(repeating: 0))
        guard case .failure(let error) = run.summary, case .partStart(let failure) = error else {
            Issue.record("ran: \(run.summary)")
            return
        }
        #expect(failure.part == "imu")
        #expect("\(error)".contains("0x69"), "\(error)")
        #expect(!run.log.successfulTransactions.contains { $0.address == 0x40 && $0.kind != .readByte })
    }
}
