import Hummingbird

/// A refused request: its status and the message the JSON body carries.
public struct ServeError: Error, Sendable, Equatable, CustomStringConvertible {
    public var status: HTTPResponse.Status
    public var message: String
    /// For 409 on control: the client that holds it.
    public var holder: String?

    public init(_ status: HTTPResponse.Status, _ message: String, holder: String? = nil) {
        self.status = status
        self.message = message
        self.holder = holder
    }

    public var description: String { "\(status.code): \(message)" }
}
