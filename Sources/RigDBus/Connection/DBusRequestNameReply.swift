import CDBus

/// `org.freedesktop.DBus.RequestName` replies (`DBUS_REQUEST_NAME_REPLY_*`).
public enum DBusRequestNameReply: Sendable, Hashable {
    case primaryOwner
    case inQueue
    case exists
    case alreadyOwner

    init?(code: UInt32) {
        switch Int32(truncatingIfNeeded: code) {
        case DBUS_REQUEST_NAME_REPLY_PRIMARY_OWNER: self = .primaryOwner
        case DBUS_REQUEST_NAME_REPLY_IN_QUEUE: self = .inQueue
        case DBUS_REQUEST_NAME_REPLY_EXISTS: self = .exists
        case DBUS_REQUEST_NAME_REPLY_ALREADY_OWNER: self = .alreadyOwner
        default: return nil
        }
    }
}
