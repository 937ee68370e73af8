import Foundation
import RigCore
import RigRuntime
import Testing

@testable import RigPCA9685

/// The driver against the register-level chip model.
@Suite struct PCA9685OutputTests {
    @Test func initialisationFollowsTheDatasheet() throws {
        let rig = TestRig()
        try rig.start()
        let events = rig.log.all
        // Writes in order, with the recorded sleep between wake and RESTART.
        var steps: [String] = []
        for event in events {
            switch event {
            case .transaction(let t) where t.kind == .writeByte:
                steps.append("\(PCA9685Register.name(t.register ?? 0))=\(t.data[0])")
            case .transaction(let t) where t.kind == .writeBlock:
                steps.append("block \(PCA9685Register.name(t.register ?? 0))×\(t.data.count)")
            case .slept(let d): steps.append("sleep \(d)")
            case .woke: steps.append("woke")
            case .restarted: steps.append("restarted")
            default: break
            }
        }
        #expect(
            steps == [
                "MODE1=\(0x30)",  // SLEEP | AI; ALLCALL, SUBx cleared
                "MODE2=\(0x04)",  // OUTDRV: totem pole
                "PRE_SCALE=121",
                "block LED0_ON_L×32", "block LED8_ON_L×32",
                "MODE1=\(0x20)", "woke",  // SLEEP cleared
                "sleep 0.0005 seconds",
                "MODE1=\(0xA0)",  // RESTART | AI (a no-op on a chip that never ran: nothing to restart)
            ])
        #expect(!events.contains(.prescaleWriteIgnored))
        #expect(rig.model.prescale == 121)
        #expect(rig.model.mode1 == 0x20)
        #expect(rig.model.mode2 & 0x04 != 0)
        #expect(rig.model.violations.isEmpty)
        #expect(rig.output.statusLine == "ready")
    }

    @Test(arguments: [(50.0, 121), (60.0, 101), (200.0, 30), (330.0, 17)])
    func prescaleProgrammed(frequencyHz: Double, expected: Int) throws {
        let rig = TestRig(frequencyHz: frequencyHz)
        try rig.start()
        #expect(Int(rig.model.prescale) == expected)
        #expect(!rig.log.all.contains(.prescaleWriteIgnored))
    }

    @Test(arguments: [50.0, 200.0, 330.0])
    func countsForASpreadOfPulseWidths(frequencyHz: Double) throws {
        let pulses: [Double] = [500, 800, 1000, 1234.5, 1500, 1777, 2000, 2400]
        let rig = TestRig(frequencyHz: frequencyHz, channels: Array(0..<pulses.count))
        try rig.start()
        let sent = try rig.write(pulses.map { .pulse(microseconds: min($0, rig.period - 100)) })
        for (channel, requested) in pulses.enumerated() {
            let pulse = min(requested, rig.period - 100)
            #expect(rig.model.highCounts(channel) == rig.expectedCounts(pulse: pulse))
            #expect(rig.model.channel(channel).on == 0)
            // What `sent` reports is what the pin shows, within half a tick of the request.
            #expect(abs(sent[channel] - Double(rig.model.highCounts(channel)) * rig.period / 4096) < 1e-9)
            #expect(abs(sent[channel] - pulse) <= rig.period / 4096 / 2 + 1e-9)
        }
        #expect(rig.model.violations.isEmpty)
    }

    @Test func onlyChangedRegistersAreWritten() throws {
        let rig = TestRig(channels: [0, 1, 2, 3])
        try rig.start()
        try rig.write([.pulse(microseconds: 1000), .pulse(microseconds: 1100), .pulse(microseconds: 1200), .pulse(microseconds: 1300)])
        rig.log.clear()
        try rig.write([.pulse(microseconds: 1000), .pulse(microseconds: 1100), .pulse(microseconds: 1600), .pulse(microseconds: 1300)])
        let writes = rig.log.successfulTransactions
        #expect(writes.count == 1)
        #expect(writes.first?.kind == .writeBlock)
        // 1200 → 1600 µs: OFF goes from 0x0F6 to 0x148 (both bytes); ON stays 0.
        #expect(writes.first?.register == PCA9685Register.ledOnL(channel: 2) + 2)
        #expect(writes.first?.data.count == 2)
        #expect(rig.log.busBytes == 4)  // address, register, OFF_L, OFF_H
        #expect(rig.model.highCounts(2) == rig.expectedCounts(pulse: 1600))
    }

    @Test func nothingChangedSendsNothing() throws {
        let rig = TestRig(channels: [0, 5, 9])
        try rig.start()
        let frame: [ChannelCommand] = [.pulse(microseconds: 1400), .duty(percent: 30), .off]
        try rig.write(frame)
        rig.log.clear()
        let sent = try rig.write(frame)
        #expect(rig.log.transactions.isEmpty)
        #expect(rig.log.busBytes == 0)
        #expect(sent[0] > 0 && sent[1] > 0 && sent[2] == 0)  // still reported: the chip keeps the pulses
        // A change smaller than half a tick does not reach the bus either.
        try rig.write([.pulse(microseconds: 1400.5), .duty(percent: 30.001), .off])
        #expect(rig.log.transactions.isEmpty)
    }

    @Test func adjacentChangesMergeAndGapsSplit() throws {
        let rig = TestRig(channels: Array(0..<12))
        try rig.start(Array(repeating: .pulse(microseconds: 1500), count: 12))
        rig.log.clear()
        var frame = [ChannelCommand](repeating: .pulse(microseconds: 1500), count: 12)
        for channel in [0, 1, 2, 5] { frame[channel] = .pulse(microseconds: 1000) }
        try rig.write(frame)
        // 1500 → 1000 µs: OFF 0x133 → 0x0CD, both bytes, on channels 0, 1, 2 and 5. Bridging
        // the ON bytes between two channels (2) ties with a new transaction (2): merged;
        // bridging channels 3 and 4 (10) is not.
        let bursts = rig.log.successfulTransactions.map { [Int($0.register ?? 0), $0.data.count] }
        #expect(bursts == [[Int(PCA9685Register.ledOnL(channel: 0)) + 2, 10], [Int(PCA9685Register.ledOnL(channel: 5)) + 2, 2]])
        #expect(rig.log.busBytes == (2 + 10) + (2 + 2))

        rig.log.clear()
        frame = Array(repeating: .pulse(microseconds: 1700), count: 12)  // OFF 0x15C everywhere
        try rig.write(frame)
        // Channels 0, 1, 2 and 5 change OFF_L and OFF_H (from 0x0CD), the others OFF_L alone.
        var changed = [Bool](repeating: false, count: 64)
        for channel in 0..<12 { changed[4 * channel + 2] = true }
        for channel in [0, 1, 2, 5] { changed[4 * channel + 3] = true }
        let optimum = PCA9685WriteOptimum.fewestBytes(changed: changed)
        #expect(rig.log.busBytes == optimum.bytes)
        #expect(rig.log.successfulTransactions.count == optimum.transactions)
        for channel in 0..<12 { #expect(rig.model.highCounts(channel) == rig.expectedCounts(pulse: 1700)) }
    }

    @Test func offChannelsGetTheFullOffBit() throws {
        let rig = TestRig(channels: [0, 1])
        try rig.start()
        let sent = try rig.write([.off, .pulse(microseconds: 1500)])
        #expect(rig.model.channel(0) == ChipChannel(on: 0, off: 0x1000))
        #expect(rig.model.highCounts(0) == 0)
        #expect(sent[0] == 0)
        #expect(rig.model.highCounts(1) == 307)
    }

    @Test(arguments: [false, true])
    func onNeverEqualsOff(phaseStagger: Bool) throws {
        let rig = TestRig(
            phaseStagger: phaseStagger, channels: Array(0..<16),
            kinds: (0..<16).map { $0 % 2 == 0 ? .servo : .pwm })
        try rig.start()
        let pulses: [Double] = [0, 0.1, 2.5, 4.9, 5, 500, 1500, 10_000, 19_980, 19_990, 25_000]
        let duties: [Double] = [0, 0.001, 0.0122, 0.02, 1, 50, 99.9, 99.98, 99.99, 100]
        for step in 0..<40 {
            let frame: [ChannelCommand] = (0..<16).map { channel in
                channel % 2 == 0
                    ? .pulse(microseconds: pulses[(step + channel) % pulses.count])
                    : .duty(percent: duties[(step + channel) % duties.count])
            }
            try rig.write(frame)
            for channel in 0..<16 {
                let c = rig.model.channel(channel)
                if c.on & 0x1000 == 0, c.off & 0x1000 == 0 { #expect(c.on != c.off) }
            }
        }
        #expect(rig.model.violations.isEmpty)
        try rig.write((0..<16).map { _ in .duty(percent: 100) })
        #expect((0..<16).allSatisfy { rig.model.highCounts($0) == 4096 })
    }

    @Test func phaseStaggerSpreadsTheRisingEdges() throws {
        let rig = TestRig(phaseStagger: true, channels: [0, 3, 15])
        try rig.start()
        try rig.write([.pulse(microseconds: 1500), .pulse(microseconds: 1500), .pulse(microseconds: 1500)])
        #expect(rig.model.channel(0) == ChipChannel(on: 0, off: 307))
        #expect(rig.model.channel(3) == ChipChannel(on: 768, off: 768 + 307))
        // Channel 15 starts at 3840: the pulse wraps past the end of the period.
        #expect(rig.model.channel(15) == ChipChannel(on: 3840, off: (3840 + 307) % 4096))
        #expect(rig.model.highCounts(15) == 307)
    }

    @Test func dutyCyclesOnPWMChannels() throws {
        let rig = TestRig(channels: [4], kinds: [.pwm])
        try rig.start([.duty(percent: 0)])
        let sent = try rig.write([.duty(percent: 50)])
        #expect(rig.model.highCounts(4) == 2048)
        // The high time at the chip's real period (the trace turns it back into % with it).
        let period = rig.output.pwmPeriodMicroseconds
        #expect(period != servoFramePeriodMicroseconds)  // 50 Hz requested, prescale-rounded
        #expect(abs(sent[0] - period / 2) < 1e-9)
        #expect(abs(try rig.write([.duty(percent: 25)])[0] - period / 4) < 1e-9)
    }

    @Test func shutdownWritesEachSafeCommand() throws {
        let rig = TestRig(channels: [0, 1])
        try rig.start()
        try rig.write([.pulse(microseconds: 1200), .pulse(microseconds: 1800)])
        rig.output.shutdown(safe: [.off, .pulse(microseconds: 1800)])
        #expect(rig.model.highCounts(0) == 0)
        #expect(rig.model.channel(0).off & 0x1000 != 0)
        #expect(rig.model.highCounts(1) == rig.expectedCounts(pulse: 1800))
        #expect(!rig.model.isSleeping)  // held servos keep their pulse
        #expect(rig.output.statusLine == "stopped")
    }

    @Test func aRunningChipIsNotPutToSleepOnRestart() throws {
        let first = TestRig(channels: [0, 1])
        try first.start()
        try first.write([.pulse(microseconds: 1200), .pulse(microseconds: 1800)])
        first.output.shutdown(safe: [.pulse(microseconds: 1200), .pulse(microseconds: 1800)])

        let second = TestRig(channels: [0, 1], model: first.model)
        first.log.clear()
        try second.start([.pulse(microseconds: 1250), .pulse(microseconds: 1800)])
        #expect(!first.log.all.contains { if case .woke = $0 { true } else { false } })
        #expect(!first.model.isSleeping)
        #expect(first.log.sleeps.isEmpty)
        #expect(first.model.highCounts(0) == second.expectedCounts(pulse: 1250))
        #expect(first.model.mode1 & 0x01 == 0)
    }

    @Test func aRunningChipAtAnotherFrequencyIsRestartedAfterTheWait() throws {
        let first = TestRig(frequencyHz: 50, channels: [0])
        try first.start()
        let second = TestRig(frequencyHz: 60, channels: [0], model: first.model)
        first.log.clear()
        try second.start([.pulse(microseconds: 1500)])
        let order = first.log.all.compactMap { event -> String? in
            switch event {
            case .woke: "woke"
            case .slept: "slept"
            case .restarted: "restarted"
            case .prescaleWriteIgnored: "ignored"
            default: nil
            }
        }
        #expect(order == ["woke", "slept", "restarted"])
        #expect(first.model.prescale == 101)
        #expect(first.model.mode1 == 0x20)  // RESTART cleared
    }

    @Test func healthChecksAreSpreadOverTicks() throws {
        let rig = TestRig()
        try rig.start()
        let frame: [ChannelCommand] = [.pulse(microseconds: 1500), .pulse(microseconds: 1500)]
        rig.log.clear()
        try rig.write(frame)
        #expect(rig.log.transactions.isEmpty)  // not due yet
        rig.clock.advance(by: .seconds(1))
        try rig.write(frame)
        try rig.write(frame)
        try rig.write(frame)
        let reads = rig.log.transactions.map { "\($0.kind) \(PCA9685Register.name($0.register ?? 0))" }
        #expect(reads == ["readByte MODE1", "readByte PRE_SCALE"])
        #expect(rig.log.busBytes == 8)
    }

    @Test func brownOutIsDetectedAndTheLastFrameRestored() throws {
        let rig = TestRig(channels: [0, 1, 2])
        try rig.start()
        let frame: [ChannelCommand] = [.pulse(microseconds: 1100), .pulse(microseconds: 1900), .off]
        try rig.write(frame)
        let before = rig.model.channels

        rig.model.powerOnReset()
        #expect(rig.model.mode1 == 0x11)
        rig.clock.advance(by: .seconds(1))
        try rig.write(frame)  // reads MODE1: 0x11 → re-initialise
        #expect(rig.model.channels == before)
        #expect(rig.model.prescale == 121)
        #expect(rig.model.mode1 == 0x20)
        #expect(rig.output.recoveries == 1)
        #expect(rig.logs.all.contains { $0.contains("servo supply probably sagged") })
        #expect(rig.output.statusLine?.contains("recovered") == true)
        // The recovery followed the datasheet sequence again.
        #expect(rig.log.sleeps == [.microseconds(500), .microseconds(500)])
    }

    @Test func brownOutMidFrameWithABusErrorIsRepairedInTheSameTick() throws {
        let rig = TestRig(channels: [0, 1, 2, 3])
        try rig.start()
        try rig.write([.pulse(microseconds: 1500), .pulse(microseconds: 1500), .pulse(microseconds: 1500), .pulse(microseconds: 1500)])
        // The chip resets and the first attempt of the next burst fails; the retry lands
        // on a chip without auto-increment (all bytes into one register).
        let next = rig.log.transactions.count
        rig.model.resetBeforeTransaction = next
        rig.model.failNext(1, errno: 5 /* EIO */)
        let frame: [ChannelCommand] = [.pulse(microseconds: 1000), .pulse(microseconds: 1200), .pulse(microseconds: 1400), .pulse(microseconds: 1600)]
        try rig.write(frame)
        for (channel, pulse) in [1000.0, 1200, 1400, 1600].enumerated() {
            #expect(rig.model.highCounts(channel) == rig.expectedCounts(pulse: pulse))
        }
        #expect(rig.output.recoveries == 1)
        #expect(rig.output.retries == 1)
    }

    @Test func transientErrorsAreRetriedWithBackoff() throws {
        let rig = TestRig()
        try rig.start()
        rig.log.clear()
        rig.model.failNext(2, errno: 121 /* EREMOTEIO */)
        try rig.write([.pulse(microseconds: 1000), .pulse(microseconds: 1500)])
        #expect(rig.log.sleeps == [.microseconds(250), .microseconds(500)])
        #expect(rig.model.highCounts(0) == rig.expectedCounts(pulse: 1000))
        #expect(rig.output.retries == 2)
        // After an error the chip is read back at once (nothing wrong here).
        #expect(rig.log.successfulTransactions.map(\.kind) == [.writeBlock, .readByte, .readByte])
        #expect(rig.output.recoveries == 0)
    }

    @Test(arguments: [(Int32(121), "EREMOTEIO"), (Int32(5), "EIO"), (Int32(110), "ETIMEDOUT")])
    func persistentErrorsBecomeAnOutputFault(errno: Int32, name: String) throws {
        let rig = TestRig()
        try rig.start()
        rig.log.clear()
        rig.model.failNext(100, errno: errno)
        let fault = #expect(throws: OutputFault.self) {
            try rig.write([.pulse(microseconds: 1000), .pulse(microseconds: 1500)])
        }
        let message = fault?.description ?? ""
        #expect(message.contains("/dev/i2c-fake"))
        #expect(message.contains("0x40"))
        #expect(message.contains(name))
        #expect(message.contains("after 4 attempts"))
        #expect(fault?.cause == .system(errno: errno))
        #expect(message.contains("power") || message.contains("VCC"))
        #expect(rig.log.transactions.count == 4)
        // Total waiting on the loop thread stays within a few milliseconds.
        #expect(rig.log.sleeps.reduce(.zero, +) <= .milliseconds(2))
    }

    @Test func noDeviceFromATransferMeansNothingAnsweredNotNoBus() throws {
        // i2c-stub answers an address nothing is at with ENODEV (19) on the transfer.
        let rig = TestRig()
        try rig.start()
        rig.model.failNext(100, errno: 19)
        let fault = #expect(throws: OutputFault.self) {
            try rig.write([.pulse(microseconds: 1000), .pulse(microseconds: 1500)])
        }
        #expect(fault?.description.contains("Nothing acknowledged address 0x40") == true)
        #expect(fault?.description.contains("No such I2C bus") == false)
    }

    @Test func nonTransientErrorsFailAtOnce() throws {
        let rig = TestRig()
        try rig.start()
        rig.log.clear()
        rig.model.failNext(1, errno: 16 /* EBUSY */)
        let fault = #expect(throws: OutputFault.self) { try rig.write([.off, .off]) }
        #expect(fault?.description.contains("EBUSY") == true)
        #expect(rig.log.sleeps.isEmpty)
    }

    @Test func aMissingChipFailsStartWithAHint() throws {
        let rig = TestRig(model: PCA9685Model(address: 0x41))
        let fault = #expect(throws: OutputFault.self) { try rig.start() }
        #expect(fault?.description.contains("0x40") == true)
        #expect(fault?.description.contains("address jumpers") == true)
        #expect(fault?.cause == .system(errno: 121))  // EREMOTEIO: nothing acknowledged
    }

    @Test func withoutStartNothingTouchesTheChip() {
        let rig = TestRig()
        #expect(throws: OutputFault.self) { try rig.write([.off, .off]) }
        rig.output.shutdown(safe: [.off, .off])
        #expect(rig.log.transactions.isEmpty)
    }

    @Test func startRejectsChannelsOutOfRange() {
        let rig = TestRig(channels: [16])
        let fault = #expect(throws: OutputFault.self) { try rig.start() }
        #expect(fault?.cause == .misuse)
    }

    @Test func statePersistsAndIsLoadedBeforeWake() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }

        let first = TestRig(channels: [0, 1, 7], kinds: [.servo, .servo, .pwm], stateDirectory: directory)
        #expect(first.output.savedPose() == nil)
        try first.start()
        try first.write([.pulse(microseconds: 1100), .pulse(microseconds: 1850), .duty(percent: 40)])
        first.output.shutdown(safe: [.off, .pulse(microseconds: 1850), .off])
        let file = directory + "/pca9685-i2c-fake-0x40.json"
        #expect(FileManager.default.fileExists(atPath: file))
        #expect(!FileManager.default.fileExists(atPath: file + ".tmp"))

        // Power cycle: a new chip in its power-on state, a new output.
        let second = TestRig(channels: [0, 1, 7], kinds: [.servo, .servo, .pwm], stateDirectory: directory)
        let pose = try #require(second.output.savedPose())
        // Released channels remember where they were last driven.
        let initial = second.channels.map { pose.command(for: $0) ?? .off }
        #expect(initial[2] == .duty(percent: 1638.0 / 4096 * 100))  // 40 % as programmed
        try second.start(initial)
        let wake = second.log.all.compactMap { if case .woke(let leds, let prescale) = $0 { (leds, prescale) } else { nil } }
        #expect(wake.count == 1)
        #expect(wake.first?.1 == 121)
        let leds = try #require(wake.first?.0)
        #expect(leds[0] == ChipChannel(on: 0, off: UInt16(first.expectedCounts(pulse: 1100))))
        #expect(leds[1] == ChipChannel(on: 0, off: UInt16(first.expectedCounts(pulse: 1850))))
        #expect(leds[7] == ChipChannel(on: 0, off: 1638))
        #expect(leds[2] == ChipChannel(on: 0, off: 0x1000))  // unused channels off
    }

    @Test func stateSurvivesAFrequencyChangeAsPulseWidths() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let first = TestRig(frequencyHz: 50, channels: [0], stateDirectory: directory)
        try first.start()
        try first.write([.pulse(microseconds: 1500)])
        first.output.shutdown(safe: [.pulse(microseconds: 1500)])
        let second = TestRig(frequencyHz: 200, channels: [0], stateDirectory: directory)
        let pose = try #require(second.output.savedPose())
        guard case .pulse(let microseconds) = pose.command(for: second.channels[0]) else {
            Issue.record("expected a pulse")
            return
        }
        #expect(abs(microseconds - 1500) < first.period / 4096)
    }

    @Test func stateDirectoryDefaults() {
        #expect(StateDirectory.default(environment: ["XDG_STATE_HOME": "/s", "HOME": "/h"], isRoot: true) == "/s/rig")
        #expect(StateDirectory.default(environment: ["HOME": "/h"], isRoot: true) == "/var/lib/rig")
        #expect(StateDirectory.default(environment: ["HOME": "/h"], isRoot: false) == "/h/.local/state/rig")
        #expect(StateDirectory.default(environment: [:], isRoot: false) == nil)
        // The package's user "rig" (home /var/lib/rig): where its units keep state.
        #expect(StateDirectory.default(environment: ["HOME": "/var/lib/rig"], isRoot: false) == "/var/lib/rig")
    }

    @Test func saveWritesOnlyWhenThePoseChanged() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let rig = TestRig(channels: [0], stateDirectory: directory)
        try rig.start()
        let store = try #require(rig.output.stateStore)
        try store.save()
        let file = store.filePath
        try FileManager.default.removeItem(atPath: file)
        try store.save()  // unchanged: not written again
        #expect(!FileManager.default.fileExists(atPath: file))
        try rig.write([.pulse(microseconds: 1600)])
        try store.save()
        #expect(FileManager.default.fileExists(atPath: file))
    }
}
