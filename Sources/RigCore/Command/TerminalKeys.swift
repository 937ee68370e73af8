/// A raw terminal's bytes as keys: the arrow keys' escape sequences (`ESC [ A…D`, also
/// `ESC O A…D`), a lone Esc, and every other byte as itself. Pure; keeps the state of a
/// half-read escape sequence. The one decoder of terminal keys: jog (`KeyDecoder`) and
/// `rig calibrate servo` map what it reads to their own actions.
public struct TerminalKeys: Sendable {
    public enum Key: Sendable, Equatable {
        /// 0 left, 1 right, 2 up, 3 down (the `GamepadSnapshot.pulses` order).
        case arrow(Int)
        /// An Esc that began no arrow's sequence.
        case escape
        case byte(UInt8)
    }

    private var escape = 0

    public init() {}

    /// Forgets a half-read escape sequence.
    public mutating func reset() { escape = 0 }

    /// Feeds one byte; returns the keys it completes: none, one, or a lone Esc and the
    /// byte after it.
    public mutating func feed(_ byte: UInt8) -> [Key] {
        switch (escape, byte) {
        case (0, 0x1B):
            escape = 1
            return []
        case (1, 0x1B):
            // Esc Esc: the first was alone; the second may begin a sequence.
            return [.escape]
        case (1, UInt8(ascii: "[")), (1, UInt8(ascii: "O")):
            escape = 2
            return []
        case (1, _):
            escape = 0
            return [.escape, .byte(byte)]
        case (2, _):
            escape = 0
            switch byte {
            case UInt8(ascii: "D"): return [.arrow(0)]
            case UInt8(ascii: "C"): return [.arrow(1)]
            case UInt8(ascii: "A"): return [.arrow(2)]
            case UInt8(ascii: "B"): return [.arrow(3)]
            default: return []
            }
        default:
            return [.byte(byte)]
        }
    }
}
