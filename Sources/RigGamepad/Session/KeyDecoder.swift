import RigCore

/// Turns terminal bytes into jog input: arrow keys (read by `TerminalKeys`), `+`/`-`,
/// space, and letters. Pure; keeps the state of a half-read escape sequence.
public struct KeyDecoder: Sendable {
    /// What a key means.
    public enum Key: Sendable, Equatable {
        /// 0 left, 1 right, 2 up, 3 down (the `GamepadSnapshot.pulses` order).
        case arrow(Int)
        case action(JogConfig.Action)
    }

    private var keys = TerminalKeys()

    public init() {}

    /// Feeds one byte; returns the key it completes, if any (a lone Esc means nothing here).
    public mutating func feed(_ byte: UInt8) -> Key? {
        for key in keys.feed(byte) {
            switch key {
            case .arrow(let direction): return .arrow(direction)
            case .escape: continue
            case .byte(let byte): return Self.action(byte).map(Key.action)
            }
        }
        return nil
    }

    private static func action(_ byte: UInt8) -> JogConfig.Action? {
        switch byte {
        case UInt8(ascii: "+"), UInt8(ascii: "="): return .faster
        case UInt8(ascii: "-"), UInt8(ascii: "_"): return .slower
        case UInt8(ascii: " "): return .record
        case UInt8(ascii: "x"), 0x7F, 0x08: return .delete
        case UInt8(ascii: "h"): return .home
        case UInt8(ascii: "p"): return .preview
        case UInt8(ascii: "s"): return .save
        case UInt8(ascii: "q"): return .quit
        default: return nil
        }
    }
}
