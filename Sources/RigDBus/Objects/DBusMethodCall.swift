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
}
