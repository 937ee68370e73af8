import RigFormat

/// `{"event":"warning","message":…}`: something a person should read after the run,
/// such as a Cascable recipe whose waits and the program's steps differ in number.
public struct ShotLogWarning: Sendable, Equatable {
    public var message: String

    public init(message: String) {
        self.message = message
    }

    /// The event as one line of JSON, without the line break.
    public func jsonLine() -> String {
        "{\"event\":\"warning\",\"message\":\(JSONText.string(message))}"
    }

    init(reading object: ObjectReader) throws(FileError) {
        message = try object.required("message").string()
        try object.finish()
    }
}
