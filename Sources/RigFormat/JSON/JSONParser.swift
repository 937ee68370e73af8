/// A strict RFC 8259 JSON parser that records the line and column of every value.
///
/// Duplicate keys in one object are an error (a rig file with two `maxVelocity` keys is
/// a mistake, not a merge).
public struct JSONParser {
    private let bytes: [UInt8]
    private var index = 0
    private var line = 1
    private var lineStart = 0
    private var depth = 0
    private static let maxDepth = 256
    /// Where the last value or key started (see `markLocation`).
    private var markIndex = 0
    private var markColumn = 1
    /// The members and elements of the objects and arrays being parsed, innermost last:
    /// each gets its own array at its exact size when it closes (growing one array per
    /// object by doubling left up to half of it unused, over a million keyframe objects).
    private var memberStack: [JSONMember] = []
    private var elementStack: [JSONNode] = []
    /// Up to this many keys an object's duplicates are found by a scan, beyond it by a Set.
    private static let keysScanned = 16
    /// One `JSONString` per distinct text (see `JSONString`).
    private var strings: [String: JSONString] = [:]

    private mutating func intern(_ text: String) -> JSONString {
        if let known = strings[text] { return known }
        let string = JSONString(text)
        // Bounded, so a file of a million distinct strings does not also grow a table.
        if strings.count < 4096 { strings[text] = string }
        return string
    }

    /// The most values (objects, arrays, strings, numbers, literals) one document may hold:
    /// a program of 1,000,000 keyframes has about 4,000,000. It bounds the tree's memory
    /// (about 200 bytes a value at worst) whatever a 64 MB file of `[0,0,0,…]` asks for.
    public static let defaultMaxValues = 8_000_000
    private let maxValues: Int
    private var values = 0

    public init(_ text: String, maxValues: Int = JSONParser.defaultMaxValues) {
        bytes = Array(text.utf8)
        self.maxValues = maxValues
    }

    public init(bytes: [UInt8], maxValues: Int = JSONParser.defaultMaxValues) {
        self.bytes = bytes
        self.maxValues = maxValues
    }

    /// Parses one JSON document; anything after it but white space is an error.
    public static func parse(_ text: String) throws(JSONSyntaxError) -> JSONNode {
        var parser = JSONParser(text)
        return try parser.parseDocument()
    }

    public mutating func parseDocument() throws(JSONSyntaxError) -> JSONNode {
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) {
            index = 3
            lineStart = 3
        }
        skipWhitespace()
        let node = try parseValue()
        skipWhitespace()
        if index < bytes.count {
            throw error("unexpected \(describe(bytes[index])) after the end of the document")
        }
        return node
    }

    private var location: SourceLocation { location(at: index) }

    /// Where byte `offset` of the current line is.
    private func location(at offset: Int) -> SourceLocation {
        // Columns count characters, not bytes: skip UTF-8 continuation bytes.
        var column = 1
        var i = lineStart
        while i < offset {
            if bytes[i] & 0xC0 != 0x80 { column += 1 }
            i += 1
        }
        return SourceLocation(line: line, column: column)
    }

    private func error(_ message: String) -> JSONSyntaxError {
        JSONSyntaxError(message: message, location: location)
    }

    private func describe(_ byte: UInt8) -> String {
        switch byte {
        case UInt8(ascii: "'"): return "\"'\""
        case 0x20...0x7E: return "'\(Character(UnicodeScalar(byte)))'"
        default: return "byte 0x\(String(byte, radix: 16, uppercase: true))"
        }
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09:
                index += 1
            case 0x0D where index + 1 < bytes.count && bytes[index + 1] == 0x0A:
                index += 1  // CR LF: the LF ends the line
            case 0x0A, 0x0D:
                index += 1
                line += 1
                lineStart = index
            default:
                return
            }
        }
    }

    /// The location of `index`, as `location`, but counting on from the previous mark when
    /// it is on this line: counting from the line's start for every value made a long line
    /// (minified or generated JSON) quadratic.
    private mutating func markLocation() -> SourceLocation {
        var column = 1
        var i = lineStart
        if markIndex >= lineStart, markIndex <= index {
            column = markColumn
            i = markIndex
        }
        // Columns count characters, not bytes: skip UTF-8 continuation bytes.
        while i < index {
            if bytes[i] & 0xC0 != 0x80 { column += 1 }
            i += 1
        }
        markIndex = index
        markColumn = column
        return SourceLocation(line: line, column: column)
    }

    private mutating func parseValue() throws(JSONSyntaxError) -> JSONNode {
        let start = markLocation()
        guard index < bytes.count else { throw error("unexpected end of file, expected a value") }
        values += 1
        if values > maxValues {
            throw error("more than \(maxValues) values in one file; valid: at most \(maxValues) (a program of 1,000,000 keyframes has about 4,000,000)")
        }
        switch bytes[index] {
        case UInt8(ascii: "{"): return JSONNode(try parseObject(), at: start)
        case UInt8(ascii: "["): return JSONNode(try parseArray(), at: start)
        case UInt8(ascii: "\""): return JSONNode(.string(intern(try parseString())), at: start)
        case UInt8(ascii: "t"):
            try expectWord("true")
            return JSONNode(.bool(true), at: start)
        case UInt8(ascii: "f"):
            try expectWord("false")
            return JSONNode(.bool(false), at: start)
        case UInt8(ascii: "n"):
            try expectWord("null")
            return JSONNode(.null, at: start)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return JSONNode(try parseNumber(), at: start)
        case let byte:
            throw error("unexpected \(describe(byte)), expected a value (object, array, string, number, true, false or null)")
        }
    }

    private mutating func expectWord(_ word: String) throws(JSONSyntaxError) {
        for expected in word.utf8 {
            guard index < bytes.count, bytes[index] == expected else {
                throw error("invalid literal, expected '\(word)'")
            }
            index += 1
        }
    }

    private mutating func enter() throws(JSONSyntaxError) {
        depth += 1
        if depth > Self.maxDepth { throw error("nesting deeper than \(Self.maxDepth) levels") }
    }

    private mutating func parseObject() throws(JSONSyntaxError) -> JSONValue {
        try enter()
        defer { depth -= 1 }
        index += 1
        let base = memberStack.count
        var seen: Set<String> = []
        // Parsing stops at the first error, so the stacks need no cleanup on a throw.
        func close() -> JSONValue {
            let members = Array(memberStack[base...])
            memberStack.removeSubrange(base...)
            return .object(members)
        }
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            return .object([])
        }
        while true {
            skipWhitespace()
            let keyLocation = markLocation()
            guard index < bytes.count else { throw error("unexpected end of file inside an object") }
            if bytes[index] == UInt8(ascii: "}"), memberStack.count > base {
                throw error("trailing comma before '}'; JSON allows no comma after the last member")
            }
            guard bytes[index] == UInt8(ascii: "\"") else {
                throw error("expected a string key in double quotes, found \(describe(bytes[index]))")
            }
            let key = try parseString()
            // Objects in rig and program files have a handful of keys: a scan beats a Set
            // allocated per object. A large object gets a Set, so a hostile file of a million
            // keys is not quadratic.
            let count = memberStack.count - base
            let duplicate: Bool
            if count < Self.keysScanned {
                duplicate = memberStack[base...].contains { $0.key == key }
            } else {
                if count == Self.keysScanned { seen = Set(memberStack[base...].map(\.key)) }
                duplicate = !seen.insert(key).inserted
            }
            if duplicate {
                throw JSONSyntaxError(message: "duplicate key \"\(elided(key))\"", location: keyLocation)
            }
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else {
                throw error("expected ':' after key \"\(key)\"")
            }
            index += 1
            skipWhitespace()
            let value: JSONNode
            do { value = try parseValue() } catch { throw error.inside(key: key) }
            memberStack.append(JSONMember(name: intern(key), keyLocation: keyLocation, value: value))
            skipWhitespace()
            guard index < bytes.count else { throw error("unexpected end of file inside an object, expected ',' or '}'") }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
                continue
            }
            if bytes[index] == UInt8(ascii: "}") {
                index += 1
                return close()
            }
            throw error("expected ',' or '}' in object, found \(describe(bytes[index]))")
        }
    }

    private mutating func parseArray() throws(JSONSyntaxError) -> JSONValue {
        try enter()
        defer { depth -= 1 }
        index += 1
        let base = elementStack.count
        func close() -> JSONValue {
            let elements = Array(elementStack[base...])
            elementStack.removeSubrange(base...)
            return .array(elements)
        }
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            return .array([])
        }
        while true {
            skipWhitespace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "]"), elementStack.count > base {
                throw error("trailing comma before ']'; JSON allows no comma after the last element")
            }
            let element: JSONNode
            do { element = try parseValue() } catch { throw error.inside(index: elementStack.count - base) }
            elementStack.append(element)
            skipWhitespace()
            guard index < bytes.count else { throw error("unexpected end of file inside an array, expected ',' or ']'") }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
                continue
            }
            if bytes[index] == UInt8(ascii: "]") {
                index += 1
                return close()
            }
            throw error("expected ',' or ']' in array, found \(describe(bytes[index]))")
        }
    }

    private mutating func parseString() throws(JSONSyntaxError) -> String {
        // A string cannot span lines, so its start stays on the current line.
        let startIndex = index
        index += 1
        var scalars = String.UnicodeScalarView()
        var runStart = index
        func flushRun(_ s: inout String.UnicodeScalarView, _ from: Int, _ to: Int, _ bytes: [UInt8]) throws(JSONSyntaxError) {
            guard from < to else { return }
            guard let text = String(validating: bytes[from..<to], as: UTF8.self) else {
                let bad = UTF8Text.firstInvalidByte(in: bytes, from: from, to: to) ?? from
                throw JSONSyntaxError(
                    message: "invalid UTF-8 in string (byte 0x\(String(bytes[bad], radix: 16, uppercase: true)))", location: location(at: bad))
            }
            s.append(contentsOf: text.unicodeScalars)
        }
        while true {
            guard index < bytes.count else {
                throw JSONSyntaxError(message: "unterminated string: no closing '\"'", location: location(at: startIndex))
            }
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                if runStart == startIndex + 1 {
                    // No escape: the bytes are the string (most keys and values).
                    guard let text = String(validating: bytes[runStart..<index], as: UTF8.self) else {
                        try flushRun(&scalars, runStart, index, bytes)  // throws at the bad byte
                        return ""
                    }
                    index += 1
                    return text
                }
                try flushRun(&scalars, runStart, index, bytes)
                index += 1
                return String(scalars)
            case UInt8(ascii: "\\"):
                try flushRun(&scalars, runStart, index, bytes)
                index += 1
                guard index < bytes.count else {
                    throw JSONSyntaxError(message: "unterminated string: no closing '\"'", location: location(at: startIndex))
                }
                let escape = bytes[index]
                index += 1
                switch escape {
                case UInt8(ascii: "\""): scalars.append("\"")
                case UInt8(ascii: "\\"): scalars.append("\\")
                case UInt8(ascii: "/"): scalars.append("/")
                case UInt8(ascii: "b"): scalars.append("\u{08}")
                case UInt8(ascii: "f"): scalars.append("\u{0C}")
                case UInt8(ascii: "n"): scalars.append("\n")
                case UInt8(ascii: "r"): scalars.append("\r")
                case UInt8(ascii: "t"): scalars.append("\t")
                case UInt8(ascii: "u"):
                    var code = try parseHex4()
                    if (0xD800...0xDBFF).contains(code) {
                        guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                            throw error("unpaired UTF-16 surrogate in \\u escape")
                        }
                        index += 2
                        let low = try parseHex4()
                        guard (0xDC00...0xDFFF).contains(low) else { throw error("unpaired UTF-16 surrogate in \\u escape") }
                        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                    }
                    guard let scalar = Unicode.Scalar(code) else { throw error("invalid \\u escape") }
                    scalars.append(scalar)
                default:
                    index -= 1
                    throw error("invalid escape '\\\(Character(UnicodeScalar(escape)))' in string")
                }
                runStart = index
            case 0x0A, 0x0D:
                throw JSONSyntaxError(
                    message: "unterminated string: no closing '\"' before the end of the line (write a line break in a string as \\n)",
                    location: location(at: startIndex))
            case 0x00..<0x20:
                throw error("control character \(describe(byte)) in string (escape it)")
            default:
                index += 1
            }
        }
    }

    private mutating func parseHex4() throws(JSONSyntaxError) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard index < bytes.count else { throw error("unterminated \\u escape") }
            let byte = bytes[index]
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: throw error("invalid hex digit in \\u escape")
            }
            value = value * 16 + digit
            index += 1
        }
        return value
    }

    private mutating func parseNumber() throws(JSONSyntaxError) -> JSONValue {
        let start = index
        func isDigit(_ b: UInt8) -> Bool { b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9") }
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard index < bytes.count, isDigit(bytes[index]) else { throw error("invalid number: expected a digit") }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
            if index < bytes.count, isDigit(bytes[index]) {
                throw JSONSyntaxError(message: "invalid number: leading zeros are not allowed", location: location(at: start))
            }
        } else {
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard index < bytes.count, isDigit(bytes[index]) else { throw error("invalid number: expected a digit after '.'") }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard index < bytes.count, isDigit(bytes[index]) else { throw error("invalid number: expected a digit in the exponent") }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        let literal = String(decoding: bytes[start..<index], as: UTF8.self)
        // Located only on error: locating every number would make a long line quadratic.
        guard let value = Double(literal), value.isFinite else {
            throw JSONSyntaxError(
                message: "number \(elided(literal)) is too large for a double; valid: magnitudes up to 1.8e308", location: location(at: start))
        }
        // A non-zero literal that reads as 0 (1e-400) is not what the file meant.
        let mantissaEnd = bytes[start..<index].firstIndex { $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E") } ?? index
        if value == 0, bytes[start..<mantissaEnd].contains(where: { $0 >= UInt8(ascii: "1") && $0 <= UInt8(ascii: "9") }) {
            throw JSONSyntaxError(
                message: "number \(elided(literal)) is too small for a double and would read as 0; write 0 or a magnitude of at least 1e-300",
                location: location(at: start))
        }
        return .number(value)
    }
}

/// Malformed JSON text.
public struct JSONSyntaxError: Error, Sendable, Equatable {
    public var message: String
    public var location: SourceLocation
    /// The JSON path of the object or array the error is in (`$.axes[0]`), built as the
    /// error leaves each enclosing value.
    public var path = "$"

    public init(message: String, location: SourceLocation, path: String = "$") {
        self.message = message
        self.location = location
        self.path = path
    }

    /// The same error, one level further out: inside the value of `key`.
    public func inside(key: String) -> JSONSyntaxError {
        var copy = self
        copy.path = "$" + JSONContext.component(key: key) + path.dropFirst()
        return copy
    }

    /// The same error, one level further out: inside element `index` of an array.
    public func inside(index: Int) -> JSONSyntaxError {
        var copy = self
        copy.path = "$[\(index)]" + path.dropFirst()
        return copy
    }
}

extension JSONParser {
    /// The byte offset in `bytes` of a place the parser reported (a `JSONNode`'s or a key's
    /// location), counting lines and columns as the parser does (LF, CR or CR LF end a line;
    /// columns count characters; a leading BOM is not a column). Nil past the end.
    public static func byteOffset(of location: SourceLocation, in bytes: [UInt8]) -> Int? {
        var index = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        var line = 1
        while line < location.line {
            guard index < bytes.count else { return nil }
            let byte = bytes[index]
            index += 1
            if byte == 0x0A || (byte == 0x0D && !(index < bytes.count && bytes[index] == 0x0A)) { line += 1 }
        }
        var column = 1
        while column < location.column {
            guard index < bytes.count else { return nil }
            index += 1
            // A character is its first byte and its continuation bytes.
            while index < bytes.count, bytes[index] & 0xC0 == 0x80 { index += 1 }
            column += 1
        }
        return index <= bytes.count ? index : nil
    }

    /// The bytes of the one value that starts at `offset` (an object or array with
    /// everything in it, a string with its quotes): for an editor that replaces a value
    /// and keeps every other byte of the file.
    public static func valueExtent(at offset: Int, in bytes: [UInt8]) throws(JSONSyntaxError) -> Range<Int> {
        var parser = JSONParser(bytes: bytes)
        parser.index = offset
        parser.markIndex = offset
        _ = try parser.parseValue()
        return offset..<parser.index
    }
}
