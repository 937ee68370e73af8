import RigCore

/// A file name pattern with one printf-style integer conversion, as cameras number their
/// files: `IMG_%04d.JPG` → `IMG_0001.JPG`. Formatted here, never through `String(format:)`,
/// so a pattern from the command line cannot reach a C format function.
public struct ImageNamePattern: Sendable, Equatable {
    public let text: String
    private let prefix: String
    private let suffix: String
    private let width: Int
    private let zeroPad: Bool
    private let leftAlign: Bool

    public static let syntax = "one integer conversion such as %d, %04d or %4i (and %% for a literal %), e.g. IMG_%04d.JPG"

    /// Why a pattern was refused.
    public struct Problem: Error, Sendable, Equatable, CustomStringConvertible {
        public var description: String
    }

    public init(_ text: String) throws(Problem) {
        self.text = text
        var prefix = ""
        var suffix = ""
        var width = 0
        var zeroPad = false
        var leftAlign = false
        var conversions = 0
        let chars = Array(text)
        var i = 0
        while i < chars.count {
            let c = chars[i]
            if c == "\"" || c == "/" || c.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
                throw Problem(
                    description:
                        "\"\(text)\" has \(c == "/" ? "a /" : c == "\"" ? "a double quote" : "a control character"); a name pattern is a file name (Hugin quotes names in \"…\")"
                )
            }
            guard c == "%" else {
                if conversions == 0 { prefix.append(c) } else { suffix.append(c) }
                i += 1
                continue
            }
            i += 1
            guard i < chars.count else { throw Problem(description: "\"\(text)\" ends in a lone %; valid: \(Self.syntax)") }
            if chars[i] == "%" {
                if conversions == 0 { prefix.append("%") } else { suffix.append("%") }
                i += 1
                continue
            }
            var flags = ""
            while i < chars.count, "0-".contains(chars[i]) {
                flags.append(chars[i])
                i += 1
            }
            var digits = ""
            while i < chars.count, chars[i].isASCII, chars[i].isNumber {
                digits.append(chars[i])
                i += 1
            }
            guard i < chars.count, "diu".contains(chars[i]) else {
                let found = i < chars.count ? "%\(flags)\(digits)\(chars[i])" : "%\(flags)\(digits)"
                throw Problem(description: "\"\(text)\" has \"\(found)\", which is not an integer conversion; valid: \(Self.syntax)")
            }
            conversions += 1
            guard conversions == 1 else { throw Problem(description: "\"\(text)\" has more than one conversion; valid: \(Self.syntax)") }
            guard digits.count <= 2, let w = Int(digits.isEmpty ? "0" : digits) else {
                throw Problem(description: "\"\(text)\": a width of \(digits) digits is too wide; valid: up to 99")
            }
            width = w
            zeroPad = flags.contains("0")
            leftAlign = flags.contains("-")
            i += 1
        }
        guard conversions == 1 else { throw Problem(description: "\"\(text)\" has no integer conversion for the image number; valid: \(Self.syntax)") }
        self.prefix = prefix
        self.suffix = suffix
        self.width = width
        self.zeroPad = zeroPad && !leftAlign
        self.leftAlign = leftAlign
    }

    /// The name of image `number` (≥ 0).
    public func name(_ number: Int) -> String {
        let digits = String(number)
        let pad = max(0, width - digits.count)
        let padded: String
        if leftAlign {
            padded = digits + String(repeating: " ", count: pad)
        } else if zeroPad {
            padded = String(repeating: "0", count: pad) + digits
        } else {
            padded = String(repeating: " ", count: pad) + digits
        }
        return prefix + padded + suffix
    }
}
