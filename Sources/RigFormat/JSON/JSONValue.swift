/// A place in a source file, 1-based, as editors and compilers print it.
///
/// Stored as two 32-bit numbers: every value of a parsed file keeps one, and a file is at
/// most 64 MB, so neither can overflow.
public struct SourceLocation: Sendable, Equatable, CustomStringConvertible {
    private var storedLine: UInt32
    private var storedColumn: UInt32

    public var line: Int {
        get { Int(storedLine) }
        set { storedLine = UInt32(clamping: newValue) }
    }

    public var column: Int {
        get { Int(storedColumn) }
        set { storedColumn = UInt32(clamping: newValue) }
    }

    public init(line: Int, column: Int) {
        storedLine = UInt32(clamping: line)
        storedColumn = UInt32(clamping: column)
    }

    public var description: String { "\(line):\(column)" }
}

/// A parsed JSON value that remembers where each part of it stood in the file.
///
/// Foundation's decoders forget positions, and every error `rig` prints about a rig or
/// program file must name `FILE:LINE:COLUMN`, so the core parses JSON itself.
///
/// Not `indirect`: arrays and objects already hold their children on the heap, and a boxed
/// payload per value cost a third of the memory of a 1,000,000-keyframe file's tree. For the
/// same reason a number keeps only its value, not its text, arrays and objects are
/// allocated at their exact size, and strings are `JSONString` references (a value is 9
/// bytes, not the 17 an inline `String` makes it).
public enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    case number(Double)
    case string(JSONString)
    case array([JSONNode])
    case object([JSONMember])

    /// What a user would call this kind of value in an error message.
    public var kindName: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}

/// A value and where it starts.
public struct JSONNode: Sendable, Equatable {
    public var value: JSONValue
    public var location: SourceLocation

    public init(_ value: JSONValue, at location: SourceLocation) {
        self.value = value
        self.location = location
    }
}

/// One `"key": value` pair of an object, with where its key starts.
public struct JSONMember: Sendable, Equatable {
    public var name: JSONString
    public var keyLocation: SourceLocation
    public var value: JSONNode

    public init(name: JSONString, keyLocation: SourceLocation, value: JSONNode) {
        self.name = name
        self.keyLocation = keyLocation
        self.value = value
    }

    public var key: String { name.text }
}

/// The text of a string value or key in a parsed file. A reference, and one per distinct
/// text in a document (`JSONParser` interns them): a keyframe file spells `"t"`, `"value"`,
/// `"interp"` and `"linear"` a million times each, and each member or value then costs 8
/// bytes instead of 16.
public final class JSONString: Sendable, Equatable, CustomStringConvertible, ExpressibleByStringLiteral {
    public let text: String

    public init(_ text: String) { self.text = text }
    public convenience init(stringLiteral text: String) { self.init(text) }

    public var description: String { text }

    public static func == (a: JSONString, b: JSONString) -> Bool { a === b || a.text == b.text }
}
