import Hummingbird

/// A refused request: its status and the message the JSON body carries.
public struct ServeError: Error, Sendable, Equatable, CustomStringConvertible {
    public var status: HTTPResponse.Status
    public var message: String
    /// For 409 on control: the client that holds it.
    public var holder: String?
    /// For 401: the client is not paired (the page then says "needs pairing").
    public var needsPairing = false
    /// For 429: seconds until the next try is taken (the `Retry-After` header).
    public var retryAfter: Int?

    public init(_ status: HTTPResponse.Status, _ message: String, holder: String? = nil, needsPairing: Bool = false, retryAfter: Int? = nil) {
        self.status = status
        self.message = message
        self.holder = holder
        self.needsPairing = needsPairing
        self.retryAfter = retryAfter
    }

    public var description: String { "\(status.code): \(message)" }
}
