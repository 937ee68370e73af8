import Foundation
import Glibc
import Logging
import RigCore
import RigRuntime
import SystemPackage
import Testing

@testable import RigPCA9685

/// The Linux path's syscalls, through the funnel, without hardware.
@Suite struct LinuxI2CBusTests {
    @Test func opensReadWriteWithCloseOnExec() throws {
        let device = FakeI2CDevice()
        _ = try LinuxI2CBus(path: "/dev/i2c-7", syscalls: device.syscalls)
        let flags = try #require(device.state.withLock { $0.openFlags })
        #expect(flags & O_CLOEXEC != 0)
        #expect(flags & O_ACCMODE == O_RDWR)
        #expect(device.state.withLock { $0.openPath } == "/dev/i2c-7")
    }

    @Test func closesOnDeinit() throws {
        let device = FakeI2CDevice()
        do { _ = try LinuxI2CBus(path: "/dev/i2c-7", syscalls: device.syscalls) }
        #expect(device.calls.last == "close 7")
    }

    @Test func selectsTheAddressWithI2CSlaveOnlyWhenItChanges() throws {
        let device = FakeI2CDevice()
        let bus = try LinuxI2CBus(path: "/dev/i2c-7", syscalls: device.syscalls)
        try bus.writeByte(address: 0x40, register: 0, value: 0x20)
        _ = try bus.readByte(address: 0x40, register: 0)
        _ = try bus.readByte(address: 0x41, register: 0)
        let ioctls = device.calls.filter { $0.hasPrefix("ioctl") }
        // I2C_SLAVE is 0x0703 (never I2C_SLAVE_FORCE, 0x0706).
        #expect(ioctls == ["ioctl 7 0x703 0x40", "ioctl 7 0x703 0x41"])
        #expect(I2CSyscalls.setAddressRequest == 0x0703)
    }

    @Test func libi2cErrnoBecomesATypedError() throws {
        let device = FakeI2CDevice()
        let bus = try LinuxI2CBus(path: "/dev/i2c-7", syscalls: device.syscalls)
        device.fail("block", with: [-EREMOTEIO])
        let data: [UInt8] = [0, 0, 0x33, 0x01]
        let error = #expect(throws: I2CError.self) {
            try data.withUnsafeBytes { bytes in try bus.writeBlock(address: 0x40, register: 0x06, data: bytes) }
        }
        #expect(error?.errno.rawValue == EREMOTEIO)
        #expect(error?.operation == .write(register: 0x06))
        #expect(error?.address == 0x40)
        #expect(error?.isTransient == true)
        #expect(error?.errnoText == "EREMOTEIO (Remote I/O error)")
        #expect(error?.description == "writing LED0_ON_L at 0x40 on /dev/i2c-7 failed: EREMOTEIO (Remote I/O error)")
    }

    @Test func openAndIoctlFailures() throws {
        let device = FakeI2CDevice()
        device.fail("open", with: [-ENOENT])
        let openError = #expect(throws: I2CError.self) { try LinuxI2CBus(path: "/dev/i2c-9", syscalls: device.syscalls) }
        #expect(openError?.operation == .open)
        #expect(openError?.errno == .noSuchFileOrDirectory)

        let bus = try LinuxI2CBus(path: "/dev/i2c-7", syscalls: device.syscalls)
        device.fail("ioctl", with: [-EBUSY])
        let busy = #expect(throws: I2CError.self) { try bus.quickWrite(address: 0x3c) }
        #expect(busy?.operation == .selectAddress)
        #expect(busy?.errno == .resourceBusy)
        #expect(busy?.isTransient == false)
        // The failed selection is not remembered: the next call asks again.
        try bus.quickWrite(address: 0x3c)
        #expect(device.calls.filter { $0.hasPrefix("ioctl") }.count == 2)
    }

    @Test func blocksOver32BytesAreRefusedBeforeTheSyscall() throws {
        let device = FakeI2CDevice()
        let bus = try LinuxI2CBus(path: "/dev/i2c-7", syscalls: device.syscalls)
        let data = [UInt8](repeating: 0, count: 33)
        #expect(throws: I2CError.self) {
            try data.withUnsafeBytes { bytes in try bus.writeBlock(address: 0x40, register: 0x06, data: bytes) }
        }
        #expect(!device.calls.contains { $0.hasPrefix("block") })
    }

    @Test func theRealSyscallsOnADeviceThatIsNoI2CBus() throws {
        // Real open/ioctl and libi2c on /dev/null: no hardware, but the real linkage and
        // libi2c's -errno convention.
        let bus = try LinuxI2CBus(path: "/dev/null")
        let error = #expect(throws: I2CError.self) { try bus.readByte(address: 0x40, register: 0) }
        #expect(error?.operation == .selectAddress)
        #expect(error?.errno == .inappropriateIOCTLForDevice)
        let fd = I2CSyscalls.linux.open("/dev/null", O_RDWR | O_CLOEXEC)
        #expect(fd >= 0)
        #expect(I2CSyscalls.linux.smbusReadByteData(fd, 0) == -ENOTTY)
        #expect(I2CSyscalls.linux.close(fd) == 0)
        #expect(I2CSyscalls.linux.open("/nonexistent/i2c-0", O_RDWR) == -ENOENT)
    }

    func output(_ device: FakeI2CDevice, retryPolicy: I2CRetryPolicy = .default) throws -> (PCA9685Output, EventLog) {
        var config = PCA9685OutputConfig()
        config.bus = "/dev/i2c-7"
        let log = EventLog()
        let bus = try LinuxI2CBus(path: config.bus, syscalls: device.syscalls)
        let output = PCA9685Output(
            config: config, bus: bus, stateDirectory: nil, logger: Logger(label: "test"),
            clock: RecordingClock(log: log), retryPolicy: retryPolicy)
        try output.start(channels: [OutputChannel(axisName: "pan", channel: 0, kind: .servo)], initial: [.pulse(microseconds: 1500)])
        return (output, log)
    }

    @Test func theDriverRetriesThroughTheFunnel() throws {
        let device = FakeI2CDevice()
        let (output, log) = try output(device)
        device.state.withLock { $0.calls.removeAll() }
        log.clear()
        device.fail("block", with: [-EIO, -ETIMEDOUT])
        var sent = [Double.nan]
        try output.write([.pulse(microseconds: 1000)], sent: &sent)
        #expect(device.calls.filter { $0.hasPrefix("block") } == ["block 0x8 2", "block 0x8 2", "block 0x8 2"])  // LED0_OFF_L, OFF_H
        #expect(log.sleeps == [.microseconds(250), .microseconds(500)])
        #expect(device.state.withLock { $0.registers[0x08] } == 205)  // LED0_OFF_L: 1000 µs at 50 Hz
    }

    @Test func persistentFailureThroughTheFunnelNamesBusAddressAndErrno() throws {
        let device = FakeI2CDevice()
        let (output, _) = try output(device)
        device.fail("block", with: [-EIO, -EIO, -EIO, -EIO])
        var sent = [Double.nan]
        let fault = #expect(throws: OutputFault.self) { try output.write([.pulse(microseconds: 1000)], sent: &sent) }
        let message = fault?.description ?? ""
        #expect(message.hasPrefix("pca9685 at 0x40 on /dev/i2c-7: writing LED0_OFF_L failed after 4 attempts: EIO (Input/output error)."))
        #expect(message.contains("power"))
    }

    @Test func aMissingBusDeviceFailsStartWithAHint() {
        var config = PCA9685OutputConfig()
        config.bus = "/nonexistent/i2c-9"
        let output = PCA9685Output(config: config, stateDirectory: nil, logger: Logger(label: "test"))
        let fault = #expect(throws: OutputFault.self) {
            try output.start(channels: [OutputChannel(axisName: "pan", channel: 0, kind: .servo)], initial: [.off])
        }
        #expect(fault?.description.contains("/nonexistent/i2c-9") == true)
        #expect(fault?.description.contains("ENOENT") == true)
        #expect(fault?.description.contains("enable I2C") == true)
    }
}
