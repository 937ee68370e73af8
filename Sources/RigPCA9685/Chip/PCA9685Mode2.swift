/// The MODE2 register's bits (datasheet table 6).
public struct PCA9685Mode2: OptionSet, Sendable, Hashable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// OUTNE bit 0: output state when OE is high (with OUTNE1).
    public static let outNE0 = PCA9685Mode2(rawValue: 0x01)
    /// OUTNE bit 1.
    public static let outNE1 = PCA9685Mode2(rawValue: 0x02)
    /// OUTDRV (bit 2): totem-pole outputs (0: open drain). Servos need totem pole.
    public static let outDrv = PCA9685Mode2(rawValue: 0x04)
    /// OCH (bit 3): outputs change on ACK (0: on STOP, the default, so one burst lands at once).
    public static let och = PCA9685Mode2(rawValue: 0x08)
    /// INVRT (bit 4): invert the output logic.
    public static let invrt = PCA9685Mode2(rawValue: 0x10)
}
