import RigPCA9685
import SystemPackage

/// A register-level PCA9685 behind `I2CBus`, written from the NXP datasheet (Rev. 4)
/// independently of the driver: its own register numbers, its own bit masks.
///
/// Modelled: power-on values (MODE1 0x11, MODE2 0x04, LEDn_OFF_H 0x10, PRE_SCALE 0x1E);
/// PRE_SCALE writes blocked unless SLEEP (and clamped to ≥ 3); auto-increment (AI) with
/// the datasheet's roll-over (after LED15_OFF_H 0x45 to MODE1 0x00; 0xFA…0xFE then 0x00);
/// without AI every data byte goes to the same register; ALL_LED registers write-only
/// (read 0) and loading every channel; full-on/full-off bits (full off wins); RESTART
/// (set when SLEEP is entered while running, cleared by writing 1 after waking); the
/// All Call address 0x70 while ALLCALL is set. Injectable: a power-on reset at any
/// moment, and an errno for the next N transactions.
///
/// It is the fake bus too: other chip models hang on it (`attach`, an MPU-6050), and a
/// transaction to one of their addresses is theirs.
final class PCA9685Model: I2CBus {
    // Datasheet register numbers (table 4) and bits (tables 5, 6), restated on purpose.
    static let MODE1: UInt8 = 0x00, MODE2: UInt8 = 0x01
    static let LED0_ON_L: UInt8 = 0x06, LED15_OFF_H: UInt8 = 0x45
    static let ALL_LED_ON_L: UInt8 = 0xFA, ALL_LED_OFF_H: UInt8 = 0xFD, PRE_SCALE: UInt8 = 0xFE
    static let RESTART: UInt8 = 0x80, EXTCLK: UInt8 = 0x40, AI: UInt8 = 0x20, SLEEP: UInt8 = 0x10, ALLCALL: UInt8 = 0x01
    static let OUTDRV: UInt8 = 0x04
    static let FULL: UInt8 = 0x10  // bit 4 of LEDn_ON_H / LEDn_OFF_H
    static let allCallAddress = 0x70

    let path = "/dev/i2c-fake"
    let address: Int
    let log: EventLog
    private(set) var registers = [UInt8](repeating: 0, count: 256)
    /// The internal RESTART flag (MODE1 bit 7 reads it).
    private var restartPending = false
    /// Problems a real chip would punish: ON == OFF, reserved registers, oversized blocks.
    private(set) var violations: [String] = []
    /// Every channel's high counts after each write that reached the chip, in order
    /// (what the pins showed, for tests that bound every pulse ever sent).
    private(set) var highCountsAfterWrites: [[Int]] = []

    /// Other chips on this bus, by address.
    private var attached: [Int: I2CBus] = [:]
    private var failuresLeft = 0
    private var failureErrno: Int32 = 0
    /// Run before the transaction with this index (0-based, counting every transaction).
    var resetBeforeTransaction: Int?
    private var transactionIndex = 0

    init(address: Int = 0x40, log: EventLog = EventLog()) {
        self.address = address
        self.log = log
        applyPowerOnValues()
    }

    /// Puts another chip model on this bus at `address`.
    func attach(_ chip: I2CBus, at address: Int) { attached[address] = chip }

    // MARK: - Injection

    /// The chip resets as after a brown-out: every register back to its power-on value.
    func powerOnReset() {
        applyPowerOnValues()
        log.append(.powerOnReset)
    }

    /// The next `times` transactions fail with `errno` (and have no effect).
    func failNext(_ times: Int, errno: Int32) {
        failuresLeft = times
        failureErrno = errno
    }

    private func applyPowerOnValues() {
        registers = [UInt8](repeating: 0, count: 256)
        registers[Int(Self.MODE1)] = Self.SLEEP | Self.ALLCALL
        registers[Int(Self.MODE2)] = Self.OUTDRV
        registers[0x02] = 0xE2
        registers[0x03] = 0xE4
        registers[0x04] = 0xE8
        registers[0x05] = 0xE0
        for channel in 0..<16 { registers[Int(Self.LED0_ON_L) + 4 * channel + 3] = Self.FULL }
        registers[Int(Self.PRE_SCALE)] = 0x1E
        restartPending = false
    }

    // MARK: - State a test reads

    var mode1: UInt8 { registers[Int(Self.MODE1)] | (restartPending ? Self.RESTART : 0) }
    var mode2: UInt8 { registers[Int(Self.MODE2)] }
    var prescale: UInt8 { registers[Int(Self.PRE_SCALE)] }
    var isSleeping: Bool { registers[Int(Self.MODE1)] & Self.SLEEP != 0 }

    func channel(_ n: Int) -> ChipChannel {
        let base = Int(Self.LED0_ON_L) + 4 * n
        return ChipChannel(
            on: UInt16(registers[base]) | UInt16(registers[base + 1] & 0x1F) << 8,
            off: UInt16(registers[base + 2]) | UInt16(registers[base + 3] & 0x1F) << 8)
    }

    var channels: [ChipChannel] { (0..<16).map(channel) }

    /// High ticks per period on channel `n` as the pin shows it (0 while asleep): full
    /// off wins over full on; otherwise (OFF − ON) mod 4096.
    func highCounts(_ n: Int) -> Int {
        if isSleeping { return 0 }
        let c = channel(n)
        if c.off & 0x1000 != 0 { return 0 }
        if c.on & 0x1000 != 0 { return 4096 }
        return (Int(c.off) - Int(c.on) + 4096) % 4096
    }

    // MARK: - I2CBus

    func writeByte(address: Int, register: UInt8, value: UInt8) throws(I2CError) {
        if let chip = attached[address] { return try chip.writeByte(address: address, register: register, value: value) }
        try begin(.writeByte, address: address, register: register, data: [value], busBytes: 3, operation: .write(register: register))
        write(from: register, [value])
        highCountsAfterWrites.append((0..<16).map(highCounts))
    }

    func writeBlock(address: Int, register: UInt8, data: UnsafeRawBufferPointer) throws(I2CError) {
        if let chip = attached[address] { return try chip.writeBlock(address: address, register: register, data: data) }
        let bytes = Array(data)
        if bytes.count > 32 { violations.append("SMBus block of \(bytes.count) bytes (max 32)") }
        try begin(.writeBlock, address: address, register: register, data: bytes, busBytes: 2 + bytes.count, operation: .write(register: register))
        write(from: register, bytes)
        highCountsAfterWrites.append((0..<16).map(highCounts))
    }

    func readByte(address: Int, register: UInt8) throws(I2CError) -> UInt8 {
        if let chip = attached[address] { return try chip.readByte(address: address, register: register) }
        try begin(.readByte, address: address, register: register, data: [], busBytes: 4, operation: .read(register: register))
        return read(register)
    }

    func readBlock(address: Int, register: UInt8, into: UnsafeMutableRawBufferPointer) throws(I2CError) {
        if let chip = attached[address] { return try chip.readBlock(address: address, register: register, into: into) }
        try begin(.readBlock, address: address, register: register, data: [], busBytes: 3 + into.count, operation: .read(register: register))
        var pointer = register
        for offset in 0..<into.count {
            into[offset] = read(pointer)
            if registers[Int(Self.MODE1)] & Self.AI != 0 { pointer = Self.next(after: pointer) }
        }
    }

    func quickWrite(address: Int) throws(I2CError) {
        if let chip = attached[address] { return try chip.quickWrite(address: address) }
        try begin(.quickWrite, address: address, register: nil, data: [], busBytes: 1, operation: .probe)
    }

    func receiveByte(address: Int) throws(I2CError) -> UInt8 {
        if let chip = attached[address] { return try chip.receiveByte(address: address) }
        try begin(.receiveByte, address: address, register: nil, data: [], busBytes: 2, operation: .probe)
        return read(0)
    }

    private func begin(
        _ kind: Transaction.Kind, address: Int, register: UInt8?, data: [UInt8], busBytes: Int,
        operation: I2CError.Operation
    ) throws(I2CError) {
        if transactionIndex == resetBeforeTransaction { powerOnReset() }
        transactionIndex += 1
        var transaction = Transaction(kind: kind, address: address, register: register, data: data, busBytes: busBytes)
        let acknowledged = address == self.address || (address == Self.allCallAddress && registers[0] & Self.ALLCALL != 0)
        let errno: Int32? = failuresLeft > 0 ? failureErrno : (acknowledged ? nil : 121 /* EREMOTEIO: no ACK */)
        if failuresLeft > 0 { failuresLeft -= 1 }
        if let errno {
            transaction.failedWith = errno
            log.append(.transaction(transaction))
            throw I2CError(errno: Errno(rawValue: errno), operation: operation, bus: path, address: address)
        }
        log.append(.transaction(transaction))
    }

    // MARK: - Register file

    /// The register after `register` with AI set (datasheet table 4 remark).
    static func next(after register: UInt8) -> UInt8 {
        switch register {
        case LED15_OFF_H: 0x00
        case PRE_SCALE: 0x00
        default: register &+ 1
        }
    }

    private func write(from start: UInt8, _ bytes: [UInt8]) {
        var pointer = start
        for byte in bytes {
            store(pointer, byte)
            if registers[Int(Self.MODE1)] & Self.AI != 0 { pointer = Self.next(after: pointer) }
        }
        // Outputs change at the STOP (MODE2.OCH = 0): check what the channels now hold.
        for n in 0..<16 {
            let c = channel(n)
            if c.on & 0x1000 == 0, c.off & 0x1000 == 0, c.on == c.off {
                violations.append("channel \(n): ON == OFF == \(c.on)")
            }
        }
    }

    private func store(_ register: UInt8, _ value: UInt8) {
        switch register {
        case Self.MODE1:
            let wasSleeping = isSleeping
            let sticky = registers[0] & Self.EXTCLK
            registers[0] = (value & ~Self.RESTART) | sticky
            if !wasSleeping, isSleeping { restartPending = true }
            if wasSleeping, !isSleeping { log.append(.woke(leds: channels, prescale: prescale)) }
            if value & Self.RESTART != 0, restartPending, !isSleeping {
                restartPending = false
                log.append(.restarted)
            }
        case Self.PRE_SCALE:
            if isSleeping { registers[Int(register)] = max(value, 3) } else { log.append(.prescaleWriteIgnored) }
        case Self.ALL_LED_ON_L...Self.ALL_LED_OFF_H:
            let offset = Int(register - Self.ALL_LED_ON_L)
            for n in 0..<16 { registers[Int(Self.LED0_ON_L) + 4 * n + offset] = value }
        case 0x46..<Self.ALL_LED_ON_L, 0xFF:
            violations.append("write to reserved register 0x\(String(register, radix: 16))")
        default:
            registers[Int(register)] = value
        }
    }

    private func read(_ register: UInt8) -> UInt8 {
        switch register {
        case Self.MODE1: mode1
        case Self.ALL_LED_ON_L...Self.ALL_LED_OFF_H: 0
        default: registers[Int(register)]
        }
    }
}
