import Testing

@testable import RigPCA9685

/// The chip model itself follows the datasheet (so the driver tests mean something).
@Suite struct PCA9685ModelTests {
    func block(_ model: PCA9685Model, _ register: UInt8, _ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { try model.writeBlock(address: 0x40, register: register, data: $0) }
    }

    @Test func powerOnValues() throws {
        let model = PCA9685Model()
        #expect(try model.readByte(address: 0x40, register: 0x00) == 0x11)
        #expect(try model.readByte(address: 0x40, register: 0x01) == 0x04)
        #expect(try model.readByte(address: 0x40, register: 0xFE) == 0x1E)
        #expect(model.channels.allSatisfy { $0 == ChipChannel(on: 0, off: 0x1000) })
    }

    @Test func prescaleWritesNeedSleep() throws {
        let model = PCA9685Model()
        try model.writeByte(address: 0x40, register: 0xFE, value: 121)
        #expect(model.prescale == 121)
        try model.writeByte(address: 0x40, register: 0x00, value: 0x20)  // wake
        try model.writeByte(address: 0x40, register: 0xFE, value: 30)
        #expect(model.prescale == 121)
        #expect(model.log.all.contains(.prescaleWriteIgnored))
        try model.writeByte(address: 0x40, register: 0x00, value: 0x30)  // sleep again
        try model.writeByte(address: 0x40, register: 0xFE, value: 1)
        #expect(model.prescale == 3)  // the hardware's minimum
    }

    @Test func autoIncrementRollsOverFromLED15ToMODE1() throws {
        let model = PCA9685Model()
        try model.writeByte(address: 0x40, register: 0x00, value: 0x30)  // AI + SLEEP
        try block(model, 0x42, [1, 0, 2, 0, 0x31, 0x04])  // LED15 ON/OFF, then MODE1, MODE2
        #expect(model.channel(15) == ChipChannel(on: 1, off: 2))
        #expect(model.mode1 == 0x31)
        #expect(PCA9685Model.next(after: 0xFE) == 0x00)
        #expect(PCA9685Model.next(after: 0xFA) == 0xFB)
    }

    @Test func withoutAutoIncrementEveryByteHitsOneRegister() throws {
        let model = PCA9685Model()  // power-on: AI clear
        try block(model, 0x06, [5, 0, 9, 0])
        #expect(model.channel(0) == ChipChannel(on: 0, off: 0x1000))
        #expect(try model.readByte(address: 0x40, register: 0x06) == 0)  // last byte written: 0
    }

    @Test func allLEDRegistersLoadEveryChannelAndReadZero() throws {
        let model = PCA9685Model()
        try model.writeByte(address: 0x40, register: 0x00, value: 0x20)
        try block(model, 0xFA, [0, 0, 0x00, 0x01])
        #expect(model.channels.allSatisfy { $0 == ChipChannel(on: 0, off: 256) })
        #expect(try model.readByte(address: 0x40, register: 0xFC) == 0)
    }

    @Test func fullOffWinsOverFullOn() throws {
        let model = PCA9685Model()
        try model.writeByte(address: 0x40, register: 0x00, value: 0x20)
        try block(model, 0x06, [0, 0x10, 0, 0x10])
        #expect(model.highCounts(0) == 0)
        try block(model, 0x06, [0, 0x10, 0, 0x00])
        #expect(model.highCounts(0) == 4096)
    }

    @Test func restartOnlyAfterSleepingWhileRunning() throws {
        let model = PCA9685Model()
        try model.writeByte(address: 0x40, register: 0x00, value: 0x20)  // wake from power-on
        #expect(model.mode1 & 0x80 == 0)
        try model.writeByte(address: 0x40, register: 0x00, value: 0x30)  // sleep while running
        #expect(model.mode1 & 0x80 != 0)
        try model.writeByte(address: 0x40, register: 0x00, value: 0x20)
        try model.writeByte(address: 0x40, register: 0x00, value: 0xA0)
        #expect(model.mode1 == 0x20)
        #expect(model.log.all.filter { $0 == .restarted }.count == 1)
    }

    @Test func onlyItsAddressAndAllCallAnswer() throws {
        let model = PCA9685Model()
        try model.quickWrite(address: 0x40)
        try model.quickWrite(address: 0x70)  // ALLCALL is set at power-up
        #expect(throws: I2CError.self) { try model.quickWrite(address: 0x41) }
        try model.writeByte(address: 0x40, register: 0x00, value: 0x20)
        #expect(throws: I2CError.self) { try model.quickWrite(address: 0x70) }
    }

    @Test func injectedFailuresHaveNoEffect() throws {
        let model = PCA9685Model()
        model.failNext(1, errno: 5)
        #expect(throws: I2CError.self) { try model.writeByte(address: 0x40, register: 0x00, value: 0x20) }
        #expect(model.mode1 == 0x11)
        #expect(model.log.transactions.first?.failedWith == 5)
    }
}
