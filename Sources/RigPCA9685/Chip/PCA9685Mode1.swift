/// The MODE1 register's bits (datasheet table 5).
public struct PCA9685Mode1: OptionSet, Sendable, Hashable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// ALLCALL (bit 0): answer the LED All Call address 0x70. Set at power-up; we clear it
    /// so a second chip or another program's all-call write cannot move our servos.
    public static let allCall = PCA9685Mode1(rawValue: 0x01)
    /// SUB3 (bit 1): answer I2C-bus sub-address 3.
    public static let sub3 = PCA9685Mode1(rawValue: 0x02)
    /// SUB2 (bit 2): answer I2C-bus sub-address 2.
    public static let sub2 = PCA9685Mode1(rawValue: 0x04)
    /// SUB1 (bit 3): answer I2C-bus sub-address 1.
    public static let sub1 = PCA9685Mode1(rawValue: 0x08)
    /// SLEEP (bit 4): low-power mode, oscillator off, outputs off. Set at power-up.
    /// PRE_SCALE can only be written while it is set.
    public static let sleep = PCA9685Mode1(rawValue: 0x10)
    /// AI (bit 5): register auto-increment, for burst writes of consecutive registers.
    public static let autoIncrement = PCA9685Mode1(rawValue: 0x20)
    /// EXTCLK (bit 6): use the EXTCLK pin as the clock (sticky until power cycle).
    public static let extClk = PCA9685Mode1(rawValue: 0x40)
    /// RESTART (bit 7): reads 1 when PWM was running before SLEEP was set; writing 1
    /// (at least 500 µs after clearing SLEEP) restarts all channels and clears it.
    public static let restart = PCA9685Mode1(rawValue: 0x80)

    /// MODE1 after power-on or a brown-out reset: 0x11, sleeping, all-call on.
    public static let powerOn: PCA9685Mode1 = [.sleep, .allCall]
}
