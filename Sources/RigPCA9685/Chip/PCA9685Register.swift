/// PCA9685 register addresses, named as in the NXP datasheet (Rev. 4, table 4).
///
/// Each constant's doc comment gives the datasheet name. The sixteen LED channels have four
/// registers each, starting at `LED0_ON_L` (0x06) and 4 apart; use ``ledOnL(channel:)``.
public enum PCA9685Register {
    /// MODE1: restart, external clock, auto-increment, sleep, sub-addresses, all-call.
    public static let mode1: UInt8 = 0x00
    /// MODE2: output inversion, change-on, output drive, output-not-enabled behaviour.
    public static let mode2: UInt8 = 0x01
    /// LED0_ON_L: the first channel register; channel n's four registers are at 0x06 + 4n.
    public static let led0OnL: UInt8 = 0x06
    /// LED15_OFF_H (0x45): the last channel register. With AI set, the register pointer
    /// rolls over from here to MODE1 (datasheet: "Auto-Increment past register 69 will
    /// point to MODE1 register").
    public static let led15OffH: UInt8 = 0x45
    /// ALL_LED_ON_L: writes load every channel's ON_L (write only; reads return 0).
    public static let allLedOnL: UInt8 = 0xFA
    /// ALL_LED_OFF_H: writes load every channel's OFF_H (write only; reads return 0).
    public static let allLedOffH: UInt8 = 0xFD
    /// PRE_SCALE: the PWM frequency divider. Writes are ignored unless MODE1.SLEEP is set.
    public static let preScale: UInt8 = 0xFE
    /// PRE_SCALE after power-on or a brown-out: 0x1E (200 Hz at 25 MHz).
    public static let preScalePowerOn: UInt8 = 0x1E

    /// Bytes per channel: LEDn_ON_L, LEDn_ON_H, LEDn_OFF_L, LEDn_OFF_H.
    public static let bytesPerChannel = 4
    /// The number of PWM channels (LED0…LED15).
    public static let channelCount = 16

    /// LEDn_ON_L, the first of channel `n`'s four registers (0x06 + 4n).
    @inline(__always)
    public static func ledOnL(channel: Int) -> UInt8 {
        led0OnL &+ UInt8(truncatingIfNeeded: bytesPerChannel &* channel)
    }

    /// The datasheet name of a register, for messages ("MODE1", "LED3_OFF_H", "PRE_SCALE").
    public static func name(_ register: UInt8) -> String {
        switch register {
        case mode1: return "MODE1"
        case mode2: return "MODE2"
        case 0x02...0x04: return "SUBADR\(register - 1)"
        case 0x05: return "ALLCALLADR"
        case led0OnL...led15OffH:
            let offset = Int(register - led0OnL)
            let part = ["ON_L", "ON_H", "OFF_L", "OFF_H"][offset % bytesPerChannel]
            return "LED\(offset / bytesPerChannel)_\(part)"
        case allLedOnL...allLedOffH:
            return "ALL_LED_" + ["ON_L", "ON_H", "OFF_L", "OFF_H"][Int(register - allLedOnL)]
        case preScale: return "PRE_SCALE"
        default: return "register 0x" + String(register, radix: 16, uppercase: true)
        }
    }
}

/// LEDn_ON_H / LEDn_OFF_H bit 4 as a bit of the 13-bit ON or OFF value: full on in ON,
/// full off in OFF. Full off wins when both are set.
public let pca9685FullOnOffBit: UInt16 = 0x1000
