/// An error in a rig or program file, printed the way compilers print them:
/// `FILE:LINE:COLUMN: error: <json path>: <what is wrong, what would be valid>`.
public struct FileError: Error, Sendable, Equatable, CustomStringConvertible {
    public var file: String
    public var location: SourceLocation
    /// The JSON path of the offending value, such as `$.axes[0].maxVelocity`.
    public var path: String
    public var message: String

    public init(file: String, location: SourceLocation, path: String, message: String) {
        self.file = file
        self.location = location
        self.path = path
        self.message = message
    }

    public var description: String {
        // The message's parts are elided where they quote the file; this is the backstop
        // so no error line can grow with the input.
        "\(elided(file, maxCharacters: 512)):\(location.line):\(location.column): error: \(elided(path, maxCharacters: 512)): \(elided(message, maxCharacters: 2000))"
    }
}

/// Where a value sits: the file, and its JSON path inside it.
public struct JSONContext: Sendable {
    public var file: String
    public var path: String

    public init(file: String, path: String = "$") {
        self.file = file
        self.path = path
    }

    public func appending(key: String) -> JSONContext {
        var copy = self
        copy.path += Self.component(key: key)
        return copy
    }

    /// A key as a step of a JSON path: `.name`, or `["a key"]` when it is not a plain word.
    public static func component(key: String) -> String {
        let plain = !key.isEmpty && key.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A) || $0 == 0x5F }
        return plain && key.utf8.count <= 80 ? ".\(key)" : "[\"\(elided(key))\"]"
    }

    public func appending(index: Int) -> JSONContext {
        var copy = self
        copy.path += "[\(index)]"
        return copy
    }

    public func error(_ message: String, at location: SourceLocation) -> FileError {
        FileError(file: file, location: location, path: path, message: message)
    }
}

extension JSONSyntaxError {
    /// The syntax error as a file error, at the path of the object or array it is in.
    public func fileError(file: String) -> FileError {
        FileError(file: file, location: location, path: path, message: message)
    }
}
