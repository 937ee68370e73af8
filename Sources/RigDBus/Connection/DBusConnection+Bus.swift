import CDBus

extension DBusConnection {
    static let busPath: String = DBUS_PATH_DBUS

    /// Requests a well-known name (`org.freedesktop.DBus.RequestName`, sent asynchronously
    /// rather than with the blocking `dbus_bus_request_name`).
    public func requestName(_ name: String, flags: DBusNameFlags = [.doNotQueue]) async throws -> DBusRequestNameReply {
        let reply = try await call(
            destination: BusCore.busName, path: Self.busPath, interface: BusCore.busName,
            method: "RequestName", args: [.string(name), .uint32(flags.rawValue)], expecting: "u")
        guard let code = reply[0].uint32, let result = DBusRequestNameReply(code: code) else {
            throw DBusError(DBusError.failed, "RequestName replied \(reply)")
        }
        return result
    }

    /// Releases a well-known name (`org.freedesktop.DBus.ReleaseName`).
    public func releaseName(_ name: String) async throws {
        _ = try await call(
            destination: BusCore.busName, path: Self.busPath, interface: BusCore.busName,
            method: "ReleaseName", args: [.string(name)], expecting: "u")
    }

    /// Whether `name` currently has an owner (`org.freedesktop.DBus.NameHasOwner`).
    public func nameHasOwner(_ name: String) async throws -> Bool {
        let reply = try await call(
            destination: BusCore.busName, path: Self.busPath, interface: BusCore.busName,
            method: "NameHasOwner", args: [.string(name)], expecting: "b")
        return reply[0].bool ?? false
    }
}
