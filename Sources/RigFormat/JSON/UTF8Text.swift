/// Turns a file's bytes into text, or says exactly where they stop being UTF-8.
public enum UTF8Text {
    /// The offset of the first byte that does not begin a valid UTF-8 sequence (overlong
    /// forms, surrogates, code points past U+10FFFF and truncated sequences are invalid),
    /// or nil.
    public static func firstInvalidByte(in bytes: [UInt8], from start: Int = 0, to end: Int? = nil) -> Int? {
        let end = min(end ?? bytes.count, bytes.count)
        var i = max(0, start)
        while i < end {
            let b = bytes[i]
            if b < 0x80 {
                i += 1
                continue
            }
            let length: Int
            var low: UInt8 = 0x80
            var high: UInt8 = 0xBF  // allowed range of the second byte
            switch b {
            case 0xC2...0xDF: length = 2
            case 0xE0:
                length = 3
                low = 0xA0
            case 0xE1...0xEC, 0xEE...0xEF: length = 3
            case 0xED:
                length = 3
                high = 0x9F
            case 0xF0:
                length = 4
                low = 0x90
            case 0xF1...0xF3: length = 4
            case 0xF4:
                length = 4
                high = 0x8F
            default: return i
            }
            for k in 1..<length {
                // A sequence cut short or continued wrongly is bad from its first byte.
                guard i + k < end else { return i }
                let c = bytes[i + k]
                let ok = k == 1 ? (low...high).contains(c) : (0x80...0xBF).contains(c)
                guard ok else { return i }
            }
            i += length
        }
        return nil
    }

    /// Line and column (in characters) of byte `offset`; LF, CR LF and a lone CR each end
    /// a line, as they do for the JSON parser.
    public static func location(of offset: Int, in bytes: [UInt8]) -> SourceLocation {
        var line = 1
        var column = 1
        var i = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        let end = min(offset, bytes.count)
        while i < end {
            let b = bytes[i]
            if b == 0x0A || (b == 0x0D && (i + 1 >= bytes.count || bytes[i + 1] != 0x0A)) {
                line += 1
                column = 1
            } else if b & 0xC0 != 0x80 && b != 0x0D {
                column += 1
            }
            i += 1
        }
        return SourceLocation(line: line, column: column)
    }

    /// The bytes as a String, or a `FileError` at the first byte that is not UTF-8.
    public static func decode(_ bytes: [UInt8], file: String) throws(FileError) -> String {
        try validate(bytes, file: file)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Throws a `FileError` at the first byte that is not UTF-8.
    public static func validate(_ bytes: [UInt8], file: String) throws(FileError) {
        if let bad = firstInvalidByte(in: bytes) {
            let byte = String(bytes[bad], radix: 16, uppercase: true)
            throw FileError(
                file: file, location: location(of: bad, in: bytes), path: "$",
                message: "invalid UTF-8 (byte 0x\(byte)); rig and program files must be UTF-8 text")
        }
    }
}
