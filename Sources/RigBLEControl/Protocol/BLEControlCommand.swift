/// The BLEControl wire protocol (the board's STM32 firmware): `[cmd u8][len u8][len data
/// bytes]`, big-endian, no sync byte, no checksum. Several whole commands may share one BLE
/// write (the firmware frames by the length byte); nothing may follow INIT in its write.
public enum BLEControlCommand {
    /// Resets the board's receive buffer. Always alone in its write, with response.
    public static let initialise: UInt8 = 0x00
    /// `[channel, enable]`: 1 enables the channel's output, anything else disables it.
    public static let analogOutEnable: UInt8 = 0x01
    /// `[channel, value u16 BE]`: pulse = 1000 + value µs, value 0…1000.
    public static let servoValue: UInt8 = 0x02
    /// `[channel, value u16 BE]`: duty = value / 1000 of a 20 ms period.
    public static let pwmValue: UInt8 = 0x03
    /// `[line, text…, 0x00]`: one line (0 or 1) of the 16-column LCD, at most
    /// `lcdLineLength` text bytes.
    public static let lcdText: UInt8 = 0x04
    /// Clears the LCD.
    public static let lcdClear: UInt8 = 0x05
    /// Board → rig: `[cmd]` the board did not know.
    public static let unknownReply: UInt8 = 0xFF

    /// The board's channels are 0…7; a larger index corrupts its memory.
    public static let channelCount = 8
    /// Largest SERVO_VAL / PWM_VAL value.
    public static let maxValue = 1000
    /// The servo pulse SERVO_VAL 0 stands for, in µs.
    public static let servoBaseMicroseconds = 1000.0
    /// The PWM period PWM_VAL is a per-mille duty of, in µs.
    public static let pwmPeriodMicroseconds = 20_000.0
    /// Text bytes per LCD line: the firmware copies a line into a 16-byte buffer that
    /// includes the terminator, so 15 (a 16th byte would overrun it).
    public static let lcdLineLength = 15

    /// Bytes of one SERVO_VAL or PWM_VAL command.
    public static let valueCommandBytes = 5
    /// Bytes of one ANALOG_OUT_EN command.
    public static let enableCommandBytes = 4

    /// A readable name for a command byte, for messages.
    public static func name(_ command: UInt8) -> String {
        switch command {
        case initialise: "INIT"
        case analogOutEnable: "ANALOG_OUT_EN"
        case servoValue: "SERVO_VAL"
        case pwmValue: "PWM_VAL"
        case lcdText: "LCD_TEXT"
        case lcdClear: "LCD_CLEAR"
        case unknownReply: "UNKNOWN"
        default: "0x" + String(command, radix: 16, uppercase: true)
        }
    }

    /// INIT: `00 00`.
    public static func encodeInit() -> [UInt8] { [initialise, 0] }

    /// ANALOG_OUT_EN: `01 02 ch en`. `channel` must be < 8 (checked by callers at start).
    public static func encodeEnable(channel: Int, enabled: Bool) -> [UInt8] {
        [analogOutEnable, 2, UInt8(truncatingIfNeeded: channel), enabled ? 1 : 0]
    }

    /// SERVO_VAL / PWM_VAL into `buffer` at `offset` (5 bytes), without allocating.
    @inline(__always)
    public static func storeValue(command: UInt8, channel: UInt8, value: Int, into buffer: inout [UInt8], at offset: Int) {
        let clamped = UInt16(min(max(value, 0), maxValue))
        buffer[offset] = command
        buffer[offset + 1] = 3
        buffer[offset + 2] = channel
        buffer[offset + 3] = UInt8(clamped >> 8)
        buffer[offset + 4] = UInt8(clamped & 0xFF)
    }

    /// SERVO_VAL / PWM_VAL as a new array (tests, shutdown).
    public static func encodeValue(command: UInt8, channel: Int, value: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: valueCommandBytes)
        storeValue(command: command, channel: UInt8(truncatingIfNeeded: channel), value: value, into: &bytes, at: 0)
        return bytes
    }

    /// The SERVO_VAL value for a pulse: `pulse − 1000` µs, rounded and clamped to 0…1000;
    /// `clamped` says whether the pulse lay outside 1000…2000 µs.
    @inline(__always)
    public static func servoValue(pulseMicroseconds: Double) -> (value: Int, clamped: Bool) {
        guard pulseMicroseconds.isFinite else { return (500, true) }
        let raw = (pulseMicroseconds - servoBaseMicroseconds).rounded()
        if raw < 0 { return (0, raw < -0.5) }
        if raw > Double(maxValue) { return (maxValue, true) }
        return (Int(raw), false)
    }

    /// The PWM_VAL value for a duty in percent: per mille, rounded and clamped to 0…1000.
    @inline(__always)
    public static func pwmValue(dutyPercent: Double) -> Int {
        guard dutyPercent.isFinite else { return 0 }
        return Int(min(max((dutyPercent * 10).rounded(), 0), Double(maxValue)))
    }

    /// The pulse a value command produces on the board, in µs (for a pwm channel the
    /// high time per 20 ms period).
    @inline(__always)
    public static func pulseMicroseconds(command: UInt8, value: Int) -> Double {
        command == pwmValue
            ? Double(value) / Double(maxValue) * pwmPeriodMicroseconds
            : servoBaseMicroseconds + Double(value)
    }
}
