import CDBus

/// `org.freedesktop.DBus.RequestName` flags (`DBUS_NAME_FLAG_*`).
public struct DBusNameFlags: OptionSet, Sendable, Hashable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    public static let allowReplacement = DBusNameFlags(rawValue: UInt32(DBUS_NAME_FLAG_ALLOW_REPLACEMENT))
    public static let replaceExisting = DBusNameFlags(rawValue: UInt32(DBUS_NAME_FLAG_REPLACE_EXISTING))
    public static let doNotQueue = DBusNameFlags(rawValue: UInt32(DBUS_NAME_FLAG_DO_NOT_QUEUE))
}
