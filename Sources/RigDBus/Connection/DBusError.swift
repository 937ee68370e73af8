import CDBus

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

    public static let failed: String = DBUS_ERROR_FAILED
    public static let noReply: String = DBUS_ERROR_NO_REPLY
    public static let serviceUnknown: String = DBUS_ERROR_SERVICE_UNKNOWN
    public static let nameHasNoOwner: String = DBUS_ERROR_NAME_HAS_NO_OWNER
    public static let unknownMethod: String = DBUS_ERROR_UNKNOWN_METHOD
    public static let unknownObject: String = DBUS_ERROR_UNKNOWN_OBJECT
    public static let unknownInterface: String = DBUS_ERROR_UNKNOWN_INTERFACE
    public static let unknownProperty: String = DBUS_ERROR_UNKNOWN_PROPERTY
    public static let propertyReadOnly: String = DBUS_ERROR_PROPERTY_READ_ONLY
    public static let invalidArgs: String = DBUS_ERROR_INVALID_ARGS
    public static let disconnected: String = DBUS_ERROR_DISCONNECTED
}
