import Foundation
import SystemPackage
import Testing

@testable import RigPCA9685

/// A bus with a few devices for the probe: records which method probed each address.
final class ProbeBus: I2CBus {
    let path = "/dev/i2c-probe"
    var responding: Set<Int> = []
    var busy: Set<Int> = []
    var quickUnsupported = false
    var probes: [Int: I2CProbe.Method] = [:]

    private func target(_ address: Int) throws(I2CError) {
        if busy.contains(address) { throw I2CError(errno: .resourceBusy, operation: .selectAddress, bus: path, address: address) }
        if !responding.contains(address) { throw I2CError(errno: .noSuchAddressOrDevice, operation: .probe, bus: path, address: address) }
    }

    func quickWrite(address: Int) throws(I2CError) {
        probes[address] = .quickWrite
        if quickUnsupported { throw I2CError(errno: .notSupported, operation: .probe, bus: path, address: address) }
        try target(address)
    }

    func receiveByte(address: Int) throws(I2CError) -> UInt8 {
        probes[address] = .receiveByte
        try target(address)
        return 0
    }

    func writeByte(address: Int, register: UInt8, value: UInt8) throws(I2CError) { try target(address) }
    func writeBlock(address: Int, register: UInt8, data: UnsafeRawBufferPointer) throws(I2CError) { try target(address) }
    func readBlock(address: Int, register: UInt8, into: UnsafeMutableRawBufferPointer) throws(I2CError) { try target(address) }
    func readByte(address: Int, register: UInt8) throws(I2CError) -> UInt8 {
        try target(address)
        return 0
    }
}

@Suite struct I2CProbeTests {
    @Test func scanFindsDevicesAndDriverOwnedAddresses() throws {
        let bus = ProbeBus()
        bus.responding = [0x40, 0x50, 0x70]
        bus.busy = [0x1A]
        let findings = try I2CProbe.scan(bus: bus)
        #expect(
            findings == [
                .init(address: 0x1A, state: .inUseByDriver),
                .init(address: 0x40, state: .responding),
                .init(address: 0x50, state: .responding),
                .init(address: 0x70, state: .responding),
            ])
        #expect(bus.probes.count == 0x77 - 0x03 + 1)
    }

    @Test func eepromRangesAreProbedByReadingLikeI2cdetect() throws {
        let bus = ProbeBus()
        _ = try I2CProbe.scan(bus: bus)
        for address in I2CProbe.scanRange {
            let expected: I2CProbe.Method = (0x30...0x37).contains(address) || (0x50...0x5F).contains(address) ? .receiveByte : .quickWrite
            #expect(bus.probes[address] == expected, "address 0x\(String(address, radix: 16))")
        }
    }

    @Test func adaptersWithoutQuickWriteAreProbedByReading() throws {
        let bus = ProbeBus()
        bus.quickUnsupported = true
        bus.responding = [0x40]
        #expect(try I2CProbe.scan(bus: bus) == [.init(address: 0x40, state: .responding)])
    }

    @Test func scanOverTheLinuxFunnel() throws {
        let device = FakeI2CDevice()
        let bus = try LinuxI2CBus(path: "/dev/i2c-7", syscalls: device.syscalls)
        device.state.withLock { $0.present = [0x40, 0x57] }
        device.fail("ioctl", with: [0, 0, 0, -EBUSY])  // the 4th address (0x06) is a kernel driver's
        #expect(
            try I2CProbe.scan(bus: bus) == [
                .init(address: 0x06, state: .inUseByDriver),
                .init(address: 0x40, state: .responding),
                .init(address: 0x57, state: .responding),
            ])
        #expect(device.calls.contains("ioctl 7 0x703 0x57"))
    }

    @Test func checksAPCA9685() throws {
        let model = PCA9685Model()
        let fresh = try I2CProbe.checkPCA9685(bus: model, address: 0x40)
        #expect(fresh.isPowerOnState)
        #expect(fresh.looksLikePCA9685)
        #expect(!fresh.isAwake)
        #expect(fresh.description.contains("power-on state"))

        let rig = TestRig(model: model)
        try rig.start()
        let running = try I2CProbe.checkPCA9685(bus: model, address: 0x40)
        #expect(running.isAwake)
        #expect(running.prescale == 121)
        #expect(abs(running.nominalFrequencyHz - 50.03) < 0.01)
        #expect(running.description.contains("running"))

        #expect(throws: I2CError.self) { try I2CProbe.checkPCA9685(bus: model, address: 0x41) }
    }

    @Test func aDeviceThatIsNoI2CBusIsReportedNotScannedEmpty() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        _ = FileManager.default.createFile(atPath: directory + "/i2c-3", contents: nil)  // a plain file: ioctl says ENOTTY
        let scans = I2CProbe.scanAllBuses(deviceDirectory: directory)
        #expect(scans.count == 1)
        #expect(scans.first?.path == directory + "/i2c-3")
        #expect(scans.first?.error?.operation == .selectAddress)
        #expect(scans.first?.error?.errno == .inappropriateIOCTLForDevice)
    }

    @Test func listsBusDevicesInNumericOrder() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        for name in ["i2c-10", "i2c-2", "i2c-1", "tty0", "i2c-x"] {
            _ = FileManager.default.createFile(atPath: directory + "/" + name, contents: nil)
        }
        #expect(I2CProbe.busPaths(deviceDirectory: directory) == ["i2c-1", "i2c-2", "i2c-10"].map { directory + "/" + $0 })
    }
}
