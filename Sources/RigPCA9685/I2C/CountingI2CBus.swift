/// An I2C bus with a PCA9685-like register file behind it (auto-increment always on) that
/// counts what crosses the wire: `rig bench pca9685` drives the real `PCA9685Output` through
/// it. Bytes are counted as the tests' register model counts them: the address byte plus
/// every byte after it (the register byte included); reads are counted apart.
public final class CountingI2CBus: I2CBus {
    public let path = "counting bus"
    public private(set) var registers = [UInt8](repeating: 0, count: 256)
    /// Write transactions and their bytes (address + register + data).
    public private(set) var writeTransactions = 0
    public private(set) var writeBytes = 0
    /// Read transactions (register pointer write + repeated start + one byte back).
    public private(set) var readTransactions = 0

    public init() {
        registers[0x00] = 0x11  // MODE1 at power-on: SLEEP, ALLCALL
        registers[0xFE] = 0x1E  // PRE_SCALE at power-on
    }

    public func writeByte(address: Int, register: UInt8, value: UInt8) throws(I2CError) {
        registers[Int(register)] = value
        writeTransactions += 1
        writeBytes += 3
    }

    public func writeBlock(address: Int, register: UInt8, data: UnsafeRawBufferPointer) throws(I2CError) {
        for (offset, byte) in data.enumerated() { registers[(Int(register) + offset) & 0xFF] = byte }
        writeTransactions += 1
        writeBytes += 2 + data.count
    }

    public func readByte(address: Int, register: UInt8) throws(I2CError) -> UInt8 {
        readTransactions += 1
        return registers[Int(register)]
    }

    public func readBlock(address: Int, register: UInt8, into: UnsafeMutableRawBufferPointer) throws(I2CError) {
        readTransactions += 1
        for offset in 0..<into.count { into[offset] = registers[(Int(register) + offset) & 0xFF] }
    }

    public func quickWrite(address: Int) throws(I2CError) {}

    public func receiveByte(address: Int) throws(I2CError) -> UInt8 {
        readTransactions += 1
        return 0
    }
}
