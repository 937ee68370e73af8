/// An I2C bus as the PCA9685 driver and the probe use it: SMBus-style transfers to a
/// 7-bit address. ``LinuxI2CBus`` is the real one (i2c-dev + libi2c); tests put a chip
/// model behind it.
///
/// Every call names the target address; an implementation selects it as needed. Errors
/// are ``I2CError`` values carrying the errno. Calls are made from one thread at a time.
public protocol I2CBus: AnyObject {
    /// What to call the bus in messages: its device path ("/dev/i2c-1").
    var path: String { get }

    /// SMBus "write byte data": `register` then `value`.
    func writeByte(address: Int, register: UInt8, value: UInt8) throws(I2CError)

    /// SMBus "I2C block write": `register`, then 1…32 bytes of `data` (the chip's
    /// auto-increment spreads them over consecutive registers).
    func writeBlock(address: Int, register: UInt8, data: UnsafeRawBufferPointer) throws(I2CError)

    /// SMBus "read byte data": `register`, repeated start, one byte back.
    func readByte(address: Int, register: UInt8) throws(I2CError) -> UInt8

    /// SMBus "I2C block read": `register`, repeated start, then `into.count` (1…32) bytes
    /// from consecutive registers (the chip's auto-increment), filling `into`.
    func readBlock(address: Int, register: UInt8, into: UnsafeMutableRawBufferPointer) throws(I2CError)

    /// SMBus "quick write": the address alone, to see whether anything acknowledges it.
    func quickWrite(address: Int) throws(I2CError)

    /// SMBus "receive byte": one byte read without a register, for probing addresses
    /// where a quick write could disturb a device (EEPROMs).
    func receiveByte(address: Int) throws(I2CError) -> UInt8
}

/// The largest SMBus block: libi2c's block write carries at most 32 data bytes.
public let i2cSMBusBlockMax = 32
