import SystemPackage

#if canImport(Glibc)
    import Glibc
#endif

/// A Linux I2C bus through i2c-dev (`/dev/i2c-N`) and libi2c's SMBus calls.
///
/// Opened with `O_RDWR | O_CLOEXEC`; the target address is claimed with
/// `ioctl(I2C_SLAVE)` (never `I2C_SLAVE_FORCE`) only when it changes. libi2c's `-errno`
/// results become ``I2CError`` values here and nowhere else. Closed on deinit.
public final class LinuxI2CBus: I2CBus {
    public let path: String
    private let syscalls: I2CSyscalls
    private var fd: CInt
    private var selectedAddress = -1

    /// Opens the bus device at `path` ("/dev/i2c-1").
    public convenience init(path: String) throws(I2CError) {
        try self.init(path: path, syscalls: .linux)
    }

    init(path: String, syscalls: I2CSyscalls) throws(I2CError) {
        self.path = path
        self.syscalls = syscalls
        let result = syscalls.open(path, O_RDWR | O_CLOEXEC)
        guard result >= 0 else {
            throw I2CError(errno: Errno(rawValue: -result), operation: .open, bus: path, address: nil)
        }
        fd = result
    }

    deinit {
        if fd >= 0 { _ = syscalls.close(fd) }
    }

    /// Closes the device now (also done on deinit). Later calls fail with EBADF.
    public func close() {
        if fd >= 0 { _ = syscalls.close(fd) }
        fd = -1
        selectedAddress = -1
    }

    @inline(__always)
    private func check(_ result: CInt, _ operation: I2CError.Operation, _ address: Int) throws(I2CError) -> CInt {
        guard result >= 0 else {
            throw I2CError(errno: Errno(rawValue: -result), operation: operation, bus: path, address: address)
        }
        return result
    }

    @inline(__always)
    private func select(_ address: Int) throws(I2CError) {
        guard address != selectedAddress else { return }
        guard fd >= 0 else { throw I2CError(errno: .badFileDescriptor, operation: .selectAddress, bus: path, address: address) }
        _ = try check(syscalls.ioctl(fd, I2CSyscalls.setAddressRequest, CInt(address)), .selectAddress, address)
        selectedAddress = address
    }

    public func writeByte(address: Int, register: UInt8, value: UInt8) throws(I2CError) {
        try select(address)
        _ = try check(syscalls.smbusWriteByteData(fd, register, value), .write(register: register), address)
    }

    public func writeBlock(address: Int, register: UInt8, data: UnsafeRawBufferPointer) throws(I2CError) {
        guard (1...i2cSMBusBlockMax).contains(data.count) else {
            throw I2CError(errno: .invalidArgument, operation: .write(register: register), bus: path, address: address)
        }
        try select(address)
        _ = try check(syscalls.smbusWriteI2CBlockData(fd, register, data), .write(register: register), address)
    }

    public func readByte(address: Int, register: UInt8) throws(I2CError) -> UInt8 {
        try select(address)
        return UInt8(truncatingIfNeeded: try check(syscalls.smbusReadByteData(fd, register), .read(register: register), address))
    }

    public func readBlock(address: Int, register: UInt8, into: UnsafeMutableRawBufferPointer) throws(I2CError) {
        guard (1...i2cSMBusBlockMax).contains(into.count) else {
            throw I2CError(errno: .invalidArgument, operation: .read(register: register), bus: path, address: address)
        }
        try select(address)
        let count = try check(syscalls.smbusReadI2CBlockData(fd, register, into), .read(register: register), address)
        // A short read is a failed transfer: the rest of `into` would be stale.
        guard count == into.count else {
            throw I2CError(errno: .ioError, operation: .read(register: register), bus: path, address: address)
        }
    }

    public func quickWrite(address: Int) throws(I2CError) {
        try select(address)
        _ = try check(syscalls.smbusWriteQuick(fd), .probe, address)
    }

    public func receiveByte(address: Int) throws(I2CError) -> UInt8 {
        try select(address)
        return UInt8(truncatingIfNeeded: try check(syscalls.smbusReadByte(fd), .probe, address))
    }
}
