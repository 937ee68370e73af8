import CLinux

/// One evdev record, `struct input_event` on 64-bit Linux: a timeval (seconds and
/// microseconds, 8 bytes each), then type (u16), code (u16) and value (s32), in the
/// machine's byte order (little-endian on every board we run on): 24 bytes.
public struct InputEvent: Sendable, Equatable {
    public var seconds: Int64
    public var microseconds: Int64
    public var type: UInt16
    public var code: UInt16
    public var value: Int32

    public init(seconds: Int64 = 0, microseconds: Int64 = 0, type: UInt16, code: UInt16, value: Int32) {
        self.seconds = seconds
        self.microseconds = microseconds
        self.type = type
        self.code = code
        self.value = value
    }

    /// Bytes per record. `rig_input_event_size()` (the C `sizeof`) must agree; a test pins it.
    public static let byteCount = 24

    /// Decodes the record that starts at `offset` in `bytes` (which must hold 24 bytes there).
    @inline(__always)
    public init(bytes: UnsafeRawBufferPointer, offset: Int) {
        seconds = Int64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: Int64.self))
        microseconds = Int64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset + 8, as: Int64.self))
        type = UInt16(littleEndian: bytes.loadUnaligned(fromByteOffset: offset + 16, as: UInt16.self))
        code = UInt16(littleEndian: bytes.loadUnaligned(fromByteOffset: offset + 18, as: UInt16.self))
        value = Int32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset + 20, as: Int32.self))
    }

    /// Appends the record exactly as the kernel lays it out (for fakes and tests).
    public func encode(into bytes: inout [UInt8]) {
        func append<T: FixedWidthInteger>(_ x: T) {
            withUnsafeBytes(of: x.littleEndian) { bytes.append(contentsOf: $0) }
        }
        append(seconds)
        append(microseconds)
        append(type)
        append(code)
        append(value)
    }
}

/// The evdev codes this module uses, from `linux/input-event-codes.h` through CLinux
/// (never copied by hand).
public enum EvdevCode {
    public static let synchronization = UInt16(EV_SYN)
    public static let key = UInt16(EV_KEY)
    public static let absolute = UInt16(EV_ABS)
    public static let synReport = UInt16(SYN_REPORT)
    public static let synDropped = UInt16(SYN_DROPPED)
    /// Highest key/button code; key bitmaps hold `keyMax + 1` bits.
    public static let keyMax = Int(KEY_MAX)
    /// Highest absolute axis code.
    public static let absMax = Int(ABS_MAX)
    public static let btnGamepad = UInt16(BTN_GAMEPAD)
    public static let btnSouth = UInt16(BTN_SOUTH)
    public static let btnJoystick = Int(BTN_JOYSTICK)
    public static let absHat0X = UInt16(ABS_HAT0X)
    public static let absHat0Y = UInt16(ABS_HAT0Y)
    public static let absHat3Y = UInt16(ABS_HAT3Y)

    /// Bytes in a bitmap of every key code (EVIOCGKEY / EVIOCGBIT(EV_KEY)).
    public static let keyBitmapBytes = (keyMax + 8) / 8
    /// Bytes in a bitmap of every absolute axis code (EVIOCGBIT(EV_ABS)).
    public static let absBitmapBytes = (absMax + 8) / 8
}

extension InputEvent {
    /// `sizeof(struct input_event)` as the C compiler sees it (must equal `byteCount`).
    public static var kernelByteCount: Int { Int(rig_input_event_size()) }
}

extension AbsInfo {
    /// `sizeof(struct input_absinfo)` as the C compiler sees it (six s32: 24).
    public static var kernelByteCount: Int { Int(rig_input_absinfo_size()) }
}
