import RigCore

/// Turns terminal bytes into jog input: arrow keys (`ESC [ A…D`, also `ESC O A…D`),
/// `+`/`-`, space, and letters. Pure; keeps the state of a half-read escape sequence.
public struct KeyDecoder: Sendable {
    /// What a key means.
    public enum Key: Sendable, Equatable {
        /// 0 left, 1 right, 2 up, 3 down (the `GamepadSnapshot.pulses` order).
        case arrow(Int)
        case action(JogConfig.Action)
    }

    private var escape = 0

    public init() {}

    /// Feeds one byte; returns the key it completes, if any.
    public mutating func feed(_ byte: UInt8) -> Key? {
        switch (escape, byte) {
        case (0, 0x1B):
            escape = 1
            return nil
        case (1, UInt8(ascii: "[")), (1, UInt8(ascii: "O")):
            escape = 2
            return nil
        case (2, _):
            escape = 0
            switch byte {
            case UInt8(ascii: "D"): return .arrow(0)
            case UInt8(ascii: "C"): return .arrow(1)
            case UInt8(ascii: "A"): return .arrow(2)
            case UInt8(ascii: "B"): return .arrow(3)
            default: return nil
            }
        default:
            escape = 0
        }
        switch byte {
        case UInt8(ascii: "+"), UInt8(ascii: "="): return .action(.faster)
        case UInt8(ascii: "-"), UInt8(ascii: "_"): return .action(.slower)
        case UInt8(ascii: " "): return .action(.record)
        case UInt8(ascii: "x"), 0x7F, 0x08: return .action(.delete)
        case UInt8(ascii: "h"): return .action(.home)
        case UInt8(ascii: "p"): return .action(.preview)
        case UInt8(ascii: "s"): return .action(.save)
        case UInt8(ascii: "q"): return .action(.quit)
        default: return nil
        }
    }
}
