/// `org.freedesktop.DBus.RequestName` flags.
public struct DBusNameFlags: OptionSet, Sendable, Hashable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    public static let allowReplacement = DBusNameFlags(rawValue: 0x1)
    public static let replaceExisting = DBusNameFlags(rawValue: 0x2)
    public static let doNotQueue = DBusNameFlags(rawValue: 0x4)
}

/// `org.freedesktop.DBus.RequestName` replies.
public enum DBusRequestNameReply: UInt32, Sendable, Hashable {
    case primaryOwner = 1
    case inQueue = 2
    case exists = 3
    case alreadyOwner = 4
}

extension DBusConnection {
    static let busPath = "/org/freedesktop/DBus"

    /// Requests a well-known name (`org.freedesktop.DBus.RequestName`, sent asynchronously
    /// rather than with the blocking `dbus_bus_request_name`).
    public func requestName(_ name: String, flags: DBusNameFlags = [.doNotQueue]) async throws -> DBusRequestNameReply {
        let reply = try await call(destination: BusCore.busName, path: Self.busPath, interface: BusCore.busName,
                                   method: "RequestName", args: [.string(name), .uint32(flags.rawValue)], expecting: "u")
        guard let code = reply[0].uint32, let result = DBusRequestNameReply(rawValue: code) else {
            throw DBusError(DBusError.failed, "RequestName replied \(reply)")
        }
        return result
    }

    /// Releases a well-known name (`org.freedesktop.DBus.ReleaseName`).
    public func releaseName(_ name: String) async throws {
        _ = try await call(destination: BusCore.busName, path: Self.busPath, interface: BusCore.busName,
                           method: "ReleaseName", args: [.string(name)], expecting: "u")
    }

    /// Whether `name` currently has an owner (`org.freedesktop.DBus.NameHasOwner`).
    public func nameHasOwner(_ name: String) async throws -> Bool {
        let reply = try await call(destination: BusCore.busName, path: Self.busPath, interface: BusCore.busName,
                                   method: "NameHasOwner", args: [.string(name)], expecting: "b")
        return reply[0].bool ?? false
    }
}
