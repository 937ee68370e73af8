/// A received signal, decoded.
public struct DBusSignal: Sendable, Hashable {
    /// The sender's unique name (such as `:1.42`).
    public var sender: String?
    public var path: String
    public var interface: String
    public var member: String
    public var args: [DBusValue]

    public init(sender: String?, path: String, interface: String, member: String, args: [DBusValue]) {
        self.sender = sender
        self.path = path
        self.interface = interface
        self.member = member
        self.args = args
    }
}
