/// A D-Bus error: what an error reply carries (`name`, and the first string argument as
/// `message`), and what an exported method handler throws to reply with an error.
///
/// A call that timed out fails with ``noReply`` (libdbus synthesises that reply); a call to a
/// name nobody owns fails with ``serviceUnknown``. An exported handler throwing this error
/// replies with `name` (validated with `dbus_validate_error_name`; an invalid name is replied
/// as ``failed`` instead of letting libdbus abort).
public struct DBusError: Error, Sendable, Hashable, CustomStringConvertible {
    public var name: String
    public var message: String

    public init(_ name: String, _ message: String = "") {
        self.name = name
        self.message = message
    }

    public var description: String { message.isEmpty ? name : "\(name): \(message)" }

    /// True when this is libdbus's timeout reply (`org.freedesktop.DBus.Error.NoReply`).
    public var isTimeout: Bool { name == Self.noReply }

    public static let failed = "org.freedesktop.DBus.Error.Failed"
    public static let noReply = "org.freedesktop.DBus.Error.NoReply"
    public static let serviceUnknown = "org.freedesktop.DBus.Error.ServiceUnknown"
    public static let nameHasNoOwner = "org.freedesktop.DBus.Error.NameHasNoOwner"
    public static let unknownMethod = "org.freedesktop.DBus.Error.UnknownMethod"
    public static let unknownObject = "org.freedesktop.DBus.Error.UnknownObject"
    public static let unknownInterface = "org.freedesktop.DBus.Error.UnknownInterface"
    public static let unknownProperty = "org.freedesktop.DBus.Error.UnknownProperty"
    public static let propertyReadOnly = "org.freedesktop.DBus.Error.PropertyReadOnly"
    public static let invalidArgs = "org.freedesktop.DBus.Error.InvalidArgs"
    public static let disconnected = "org.freedesktop.DBus.Error.Disconnected"
}
