import Foundation
import RigCore
import RigFormat
import RigPCA9685
import RigRuntime
import RigTestSupport
import Testing

/// The MPU-6050 driver against the register model on the fake bus (beside a PCA9685).
@Suite struct MPU6050Tests {
    func rig(whoAmI: UInt8 = 0x68) -> (bus: PCA9685Model, chip: MPU6050Model, imu: MPU6050) {
        let log = EventLog()
        let bus = PCA9685Model(log: log)
        let chip = MPU6050Model(whoAmI: whoAmI, log: log)
        bus.attach(chip, at: 0x68)
        return (bus, chip, MPU6050(config: MPU6050Config(bus: bus.path), bus: bus))
    }

    @Test func wrongWhoAmIIsRefused() {
        let (_, chip, imu) = rig(whoAmI: 0x70)
        #expect(throws: MPU6050Error.self) { try imu.configure() }
        do { try imu.configure() } catch {
            #expect(error.description.contains("WHO_AM_I (0x75) reads 0x70"))
        }
        #expect(chip.isAsleep)
        #expect(!chip.log.transactions.contains { $0.kind == .writeByte })
    }

    /// `rig doctor`'s reading: configured, then the gyro's peak and mean over the samples;
    /// still below 3 °/s.
    @Test func aRestingReadingGivesThePeakAndTheOffset() throws {
        let (_, chip, imu) = rig()
        chip.replay = [SIMD3(0.5, -0.25, 0.1), SIMD3(0.25, -0.5, 0.1), SIMD3(-1, -0.25, 0.1), SIMD3(0.25, -0.5, 0.1)]
        let reading = try imu.restingReading(samples: 4, pause: {})
        #expect(!chip.isAsleep)
        #expect(chip.samplesRead == 4)
        #expect(reading.samples == 4)
        // The model quantizes to the 500 °/s range's 65.5 counts per °/s.
        #expect(abs(reading.peakDps - 1) < 0.02)
        #expect(abs(reading.meanDps.x - 0) < 0.02 && abs(reading.meanDps.y + 0.375) < 0.02 && abs(reading.meanDps.z - 0.1) < 0.02)
        #expect(reading.isStill)
        chip.replay = [SIMD3(0, 12, 0)]
        let moving = try imu.restingReading(samples: 3, pause: {})
        #expect(!moving.isStill)
        #expect(abs(moving.peakDps - 12) < 0.02)
    }

    @Test func noChipAtTheAddressIsAClearError() {
        let log = EventLog()
        let bus = PCA9685Model(log: log)
        let imu = MPU6050(config: MPU6050Config(bus: bus.path), bus: bus)
        do {
            try imu.configure()
            Issue.record("configured a chip that is not there")
        } catch {
            #expect(error.description.contains("does not answer"))
            #expect(error.description.contains("WHO_AM_I"))
        }
    }

    @Test func wakesAndConfiguresWithTheseBytes() throws {
        let (_, chip, imu) = rig()
        try imu.configure()
        let writes = chip.log.successfulTransactions.filter { $0.address == 0x68 && $0.kind == .writeByte }.map { [$0.register ?? 0] + $0.data }
        #expect(writes == [[0x6B, 0x01], [0x19, 0x00], [0x1A, 0x03], [0x1B, 0x08]])
        #expect(!chip.isAsleep)
        #expect(chip.log.successfulTransactions.first?.kind == .readByte)
        #expect(chip.log.successfulTransactions.first?.register == 0x75)
    }

    @Test func ratesDecodeWithTheirSign() throws {
        let (_, chip, imu) = rig()
        chip.replay = [SIMD3(100, -250.5, 0.5), SIMD3(-1000, 1000, -0.25)]
        try imu.configure()
        let a = try imu.readGyro()
        let b = try imu.readGyro()
        let lsb = 1 / 65.5
        #expect(abs(a.x - 100) <= lsb && abs(a.y + 250.5) <= lsb && abs(a.z - 0.5) <= lsb)
        // ±500 °/s full scale: beyond it the chip saturates at ±32767/65.5.
        #expect(abs(b.x + 32768 / 65.5) <= lsb && abs(b.y - 32767 / 65.5) <= lsb && abs(b.z + 0.25) <= lsb)
        let reads = chip.log.successfulTransactions.filter { $0.kind == .readBlock }
        #expect(reads.count == 2 && reads.allSatisfy { $0.register == 0x43 && $0.busBytes == 9 })
    }

    @Test func aReadTheBusDropsOnceIsTriedAgain() throws {
        let (_, chip, imu) = rig()
        chip.replay = [SIMD3(10, 0, 0), SIMD3(20, 0, 0)]
        try imu.configure()
        chip.failNext(1)
        let rates = try #require(imu.rates(), "one dropped transfer: tried again")
        #expect(abs(rates.x - 10) <= 1 / 65.5)
        chip.failNext(2)
        #expect(imu.rates() == nil, "two in a row: no reading (counted as motion)")
        #expect(abs((imu.rates()?.x ?? 0) - 20) <= 1 / 65.5, "the bus is back")
    }

    @Test(arguments: [3.0, 5.0]) func identifiesANoisyRingDownThroughTheDriver(frequency: Double) throws {
        let (_, chip, imu) = rig()
        let truth = Payload(frequencyHz: frequency, damping: 0.03)
        chip.replay = MPU6050Model.ringDown(payload: truth, noiseDps: 1.0, seed: UInt64(frequency))
        try imu.configure()
        let samples = try (0..<chip.replay.count).map { _ in try imu.readGyro().z }
        let found = try #require(RingDown.identify(samples: samples, sampleSeconds: 0.01))
        #expect(abs(found.frequencyHz / frequency - 1) <= 0.05)
        #expect(abs(found.damping - 0.03) <= 0.02)
    }

    @Test func rigFileSectionIsCheckedWithItsPlace() throws {
        let bad = """
            {"axes": [{"name": "pan", "channel": 0}],
             "imu": {"bus": 1, "address": "0x40"}}
            """
        let rig = try RigParser.parse(text: bad, file: "r.json")
        let section = try #require(rig.imu)
        do {
            _ = try MPU6050Config.parse(section)
            Issue.record("accepted 0x40")
        } catch {
            #expect(error.description.hasPrefix("r.json:2:"))
            #expect(error.description.contains("0x68 (AD0 low) or 0x69 (AD0 high)"))
        }
        let good = try RigParser.parse(text: #"{"axes": [{"name": "pan", "channel": 0}], "imu": {"bus": 1, "address": 105}}"#, file: "r.json")
        let config = try MPU6050Config.parse(try #require(good.imu))
        #expect(config.bus == "/dev/i2c-1" && config.address == 0x69)
        // An empty bus says what a bus looks like.
        let empty = try RigParser.parse(text: #"{"axes": [{"name": "pan", "channel": 0}], "imu": {"bus": ""}}"#, file: "r.json")
        let emptyBus = try #require(empty.imu)
        do throws(FileError) {
            _ = try MPU6050Config.parse(emptyBus)
            Issue.record("accepted an empty bus")
        } catch {
            #expect(
                error.description == #"r.json:1:58: error: $.imu.bus: must not be empty; valid: a bus number (1 for /dev/i2c-1) or a path like "/dev/i2c-1""#,
                "\(error)")
        }
    }

    /// `rig calibrate resonance`'s session on real drivers down to the bytes: the PCA9685
    /// output and the MPU-6050 on one fake bus, the IMU model's camera a spring on the
    /// horn the PCA9685 model's channel 0 commands (5 Hz, damping 0.03, noise); the shaper
    /// found written into the rig file.
    @Test func resonanceSessionThroughBothChipsOnOneBus() throws {
        let text = """
            {
              "name": "bench head",
              "output": {"type": "pca9685", "bus": "/dev/i2c-fake"},
              "imu": {"bus": "/dev/i2c-fake", "address": "0x68"},
              "axes": [
                {"name": "pan", "channel": 0, "pulseUs": [1000, 2000], "angleDeg": [-90, 90], "home": 0,
                 "maxVelocity": 180, "maxAcceleration": 2000}
              ]
            }

            """
        let path = try temporaryDirectory() + "/head.json"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        let rig = try RigParser.parse(text: text, file: path)
        let log = EventLog()
        let bus = PCA9685Model(log: log)
        let chip = MPU6050Model(log: log)
        bus.attach(chip, at: 0x68)
        let truth = Payload(frequencyHz: 5, damping: 0.03)
        chip.follow = (
            horn: {
                // Channel 0's pulse (50 Hz: 20 000 µs over 4096 counts) on the file's line.
                let us = Double(bus.highCounts(0)) / 4096 * 20_000
                return (us - 1500) / 500 * 90
            }, response: PayloadResponse(payload: truth, tickSeconds: rig.tickSeconds, angle: 0), noiseDps: 1.0
        )
        var config = PCA9685OutputConfig()
        config.bus = bus.path
        let logs = CapturedLogs()
        let output = PCA9685Output(config: config, bus: bus, stateDirectory: nil, logger: logs.logger)
        let imu = MPU6050(config: try MPU6050Config.parse(try #require(rig.imu)), bus: bus)
        var options = ResonanceCalibrationOptions(rigPath: path, axisName: "pan")
        options.recordSeconds = 2
        options.realtime = false
        options.trapSignals = false
        options.show = { _ in }
        let summary = try runResonanceCalibration(rig: rig, output: output, sensor: imu, options: options, logger: logs.logger)
        #expect(summary.failure == nil)
        #expect(summary.trials.count == 3 && summary.trials.allSatisfy { $0.component == 2 })
        let shaper = try #require(summary.saved)
        #expect(abs(shaper.frequencyHz / 5 - 1) <= 0.05)
        #expect(abs(shaper.damping - 0.03) <= 0.02)
        let saved = try RigParser.parse(text: try String(contentsOfFile: path, encoding: .utf8), file: path)
        #expect(saved.axes[0].shaper == shaper)
        // Every pulse the chip showed stayed on the axis's line within its limits, and the
        // gyro was read with the 6-byte block read.
        // (0: the channel off, before the start and in the safe state.)
        let pulses = bus.highCountsAfterWrites.map { Double($0[0]) / 4096 * 20_000 }.filter { $0 > 0 }
        #expect(!pulses.isEmpty && pulses.allSatisfy { abs($0 - 1500) <= 500 })
        #expect(pulses.contains { abs($0 - (1500 + 5.0 / 90 * 500)) < 3 })
        #expect(log.successfulTransactions.filter { $0.kind == .readBlock }.allSatisfy { $0.address == 0x68 && $0.register == 0x43 })
    }
}
