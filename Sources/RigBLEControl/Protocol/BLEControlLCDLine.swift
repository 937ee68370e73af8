import FoundationEssentials
import Glibc

/// One LCD line as the board gets it: 15 ASCII bytes (the firmware's 16-byte line buffer
/// holds the terminator too), padded with spaces so a
/// shorter text overwrites the previous one completely. A value type without heap storage
/// (two words), so the loop thread can copy it.
public struct BLEControlLCDLine: Sendable, Equatable {
    /// The 15 bytes, little-endian packed (byte 0 in the lowest bits of `low`).
    var low: UInt64
    var high: UInt64

    /// All spaces.
    public static let blank = BLEControlLCDLine(ascii: [])

    /// Folds `text` to what the LCD can show: accents removed ("é" → "e"), other non-ASCII
    /// and control characters as "?" and " ", cut to 15 bytes, padded with spaces.
    /// A full-width form as its ASCII character (`Ａ` → `A`), a Latin letter with marks as
    /// the letter (`é`, "LATIN SMALL LETTER E WITH ACUTE", → `e`), from the Unicode data
    /// the standard library carries; anything else as it is.
    static func fold(_ scalar: Unicode.Scalar) -> Unicode.Scalar {
        if (0xFF01...0xFF5E).contains(scalar.value) { return Unicode.Scalar(scalar.value - 0xFEE0) ?? scalar }
        if scalar.value == 0x3000 { return " " }
        guard scalar.value >= 0x80, let name = scalar.properties.name else { return scalar }
        for (prefix, small) in [("LATIN SMALL LETTER ", true), ("LATIN CAPITAL LETTER ", false)] where name.hasPrefix(prefix) {
            let rest = name.dropFirst(prefix.count)
            guard let letter = rest.first?.asciiValue, (65...90).contains(letter), rest.dropFirst().hasPrefix(" WITH ") else { continue }
            return Unicode.Scalar(small ? letter + 32 : letter)
        }
        return scalar
    }

    public init(_ text: String) {
        let folded = String(String.UnicodeScalarView(text.unicodeScalars.map(Self.fold)))
        var bytes: [UInt8] = []
        for scalar in folded.unicodeScalars {
            guard bytes.count < BLEControlCommand.lcdLineLength else { break }
            switch scalar.value {
            case 0x20..<0x7F: bytes.append(UInt8(scalar.value))
            case 0..<0x20, 0x7F: bytes.append(0x20)
            case 0x300..<0x370: continue  // a combining mark the folding left behind
            default: bytes.append(UInt8(ascii: "?"))
            }
        }
        self.init(ascii: bytes)
    }

    init(ascii bytes: [UInt8]) {
        var low: UInt64 = 0
        var high: UInt64 = 0
        for index in 0..<BLEControlCommand.lcdLineLength {
            let byte = UInt64(index < bytes.count ? bytes[index] : 0x20)
            if index < 8 { low |= byte << (8 * UInt64(index)) } else { high |= byte << (8 * UInt64(index - 8)) }
        }
        self.low = low
        self.high = high
    }

    /// Byte `index` (0…14).
    @inline(__always)
    public func byte(_ index: Int) -> UInt8 {
        index < 8 ? UInt8(truncatingIfNeeded: low >> (8 * UInt64(index))) : UInt8(truncatingIfNeeded: high >> (8 * UInt64(index - 8)))
    }

    /// The 15 bytes.
    public var bytes: [UInt8] { (0..<BLEControlCommand.lcdLineLength).map(byte) }

    /// The text (trailing spaces kept).
    public var text: String { String(decoding: bytes, as: UTF8.self) }

    /// LCD_TEXT's total size: cmd, len, line, 15 text bytes, NUL.
    public static let commandBytes = 2 + 1 + BLEControlCommand.lcdLineLength + 1

    /// Stores LCD_TEXT for this line into `buffer` at `offset` (``commandBytes`` bytes).
    /// The length byte counts the line byte, the text bytes and the terminator.
    @inline(__always)
    public func storeCommand(line: Int, into buffer: inout [UInt8], at offset: Int) {
        buffer[offset] = BLEControlCommand.lcdText
        buffer[offset + 1] = UInt8(Self.commandBytes - 2)
        buffer[offset + 2] = UInt8(line & 1)
        for index in 0..<BLEControlCommand.lcdLineLength { buffer[offset + 3 + index] = byte(index) }
        buffer[offset + 3 + BLEControlCommand.lcdLineLength] = 0
    }
}
