import CI2C

#if canImport(Glibc)
    import Glibc
#endif

/// Every libc and libi2c call ``LinuxI2CBus`` makes, in one place (swift-system's
/// `Internals/Syscalls.swift` habit), so a test can replace them with recording fakes.
///
/// Each function returns what libi2c's do: a value ≥ 0 on success, `-errno` on failure
/// (for `open`/`ioctl`/`close`, errno is read right after the call). ``LinuxI2CBus`` maps
/// that to `Errno` in one place.
struct I2CSyscalls: Sendable {
    /// `open(2)`: the file descriptor.
    var open: @Sendable (_ path: String, _ flags: CInt) -> CInt
    /// `close(2)`.
    var close: @Sendable (_ fd: CInt) -> CInt
    /// `ioctl(fd, request, arg)` with an integer argument (`I2C_SLAVE`, address).
    var ioctl: @Sendable (_ fd: CInt, _ request: UInt, _ argument: CInt) -> CInt
    /// `i2c_smbus_write_quick(fd, I2C_SMBUS_WRITE)`.
    var smbusWriteQuick: @Sendable (_ fd: CInt) -> CInt
    /// `i2c_smbus_read_byte(fd)`.
    var smbusReadByte: @Sendable (_ fd: CInt) -> CInt
    /// `i2c_smbus_read_byte_data(fd, command)`.
    var smbusReadByteData: @Sendable (_ fd: CInt, _ command: UInt8) -> CInt
    /// `i2c_smbus_write_byte_data(fd, command, value)`.
    var smbusWriteByteData: @Sendable (_ fd: CInt, _ command: UInt8, _ value: UInt8) -> CInt
    /// `i2c_smbus_write_i2c_block_data(fd, command, length, values)`.
    var smbusWriteI2CBlockData: @Sendable (_ fd: CInt, _ command: UInt8, _ data: UnsafeRawBufferPointer) -> CInt
    /// `i2c_smbus_read_i2c_block_data(fd, command, length, values)`: the count read.
    var smbusReadI2CBlockData: @Sendable (_ fd: CInt, _ command: UInt8, _ into: UnsafeMutableRawBufferPointer) -> CInt

    /// The `ioctl` request that binds the file descriptor to a 7-bit address. Never
    /// `I2C_SLAVE_FORCE`: an address a kernel driver owns must stay its own (EBUSY).
    static let setAddressRequest = UInt(I2C_SLAVE)

    /// The real calls.
    static let linux = I2CSyscalls(
        open: { path, flags in
            let fd = Glibc.open(path, flags)
            return fd >= 0 ? fd : -Glibc.errno
        },
        close: { fd in Glibc.close(fd) == 0 ? 0 : -Glibc.errno },
        ioctl: { fd, request, argument in
            Glibc.ioctl(fd, request, argument) >= 0 ? 0 : -Glibc.errno
        },
        smbusWriteQuick: { fd in i2c_smbus_write_quick(fd, UInt8(I2C_SMBUS_WRITE)) },
        smbusReadByte: { fd in i2c_smbus_read_byte(fd) },
        smbusReadByteData: { fd, command in i2c_smbus_read_byte_data(fd, command) },
        smbusWriteByteData: { fd, command, value in i2c_smbus_write_byte_data(fd, command, value) },
        smbusWriteI2CBlockData: { fd, command, data in
            guard let base = data.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return -EINVAL }
            return i2c_smbus_write_i2c_block_data(fd, command, UInt8(truncatingIfNeeded: data.count), base)
        },
        smbusReadI2CBlockData: { fd, command, into in
            guard let base = into.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return -EINVAL }
            return i2c_smbus_read_i2c_block_data(fd, command, UInt8(truncatingIfNeeded: into.count), base)
        }
    )
}
