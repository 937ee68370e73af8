/// An incoming method call on an exported object, decoded.
public struct DBusMethodCall: Sendable {
    /// The caller's unique name.
    public var sender: String?
    public var path: String
    public var interface: String?
    public var member: String
    public var args: [DBusValue]
    /// The caller asked for no reply (`dbus_message_get_no_reply`); BlueZ sends
    /// write-without-response writes this way, so errors never reach the peer.
    public var noReplyExpected: Bool

    /// Builds a call by hand, so a handler can be tested without a bus.
    public init(
        sender: String? = nil, path: String, interface: String?, member: String, args: [DBusValue] = [],
        noReplyExpected: Bool = false
    ) {
        self.sender = sender
        self.path = path
        self.interface = interface
        self.member = member
        self.args = args
        self.noReplyExpected = noReplyExpected
    }
}
