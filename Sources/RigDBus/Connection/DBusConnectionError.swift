/// Failures of the connection itself (as opposed to an error reply, ``DBusError``).
public enum DBusConnectionError: Error, Sendable, Hashable, CustomStringConvertible {
    /// `dbus_bus_get_private` / `dbus_connection_open_private` / `dbus_bus_register` failed.
    case connectFailed(name: String, message: String)
    /// The bus went away; nothing more can be sent.
    case disconnected
    /// ``DBusConnection/close()`` was called.
    case closed
    /// An object is already exported at this path (`dbus_connection_try_register_object_path`).
    case pathInUse(String)
    /// The bus thread could not be started.
    case threadStartFailed(Int32)
    /// libdbus ran out of memory.
    case outOfMemory

    public var description: String {
        switch self {
        case .connectFailed(let name, let message): "cannot connect to D-Bus: \(name): \(message)"
        case .disconnected: "the D-Bus connection was lost"
        case .closed: "the D-Bus connection was closed"
        case .pathInUse(let path): "an object is already exported at \(path)"
        case .threadStartFailed(let code): "cannot start the D-Bus thread (error \(code))"
        case .outOfMemory: "libdbus ran out of memory"
        }
    }
}
