/// The reply of `org.freedesktop.DBus.ObjectManager.GetManagedObjects`, decoded:
/// object path → interface name → property name → value (variants unwrapped).
public struct DBusManagedObjects: Sendable, Hashable {
    public var objects: [String: [String: [String: DBusValue]]]

    /// Decodes the reply arguments (`a{oa{sa{sv}}}`); throws
    /// ``DBusMarshalError/signatureMismatch(expected:actual:)`` for any other shape.
    public init(reply args: [DBusValue]) throws(DBusMarshalError) {
        let expected = "a{oa{sa{sv}}}"
        guard args.dbusSignature == expected, let byPath = args[0].stringKeyedDictionary else {
            throw .signatureMismatch(expected: expected, actual: args.dbusSignature)
        }
        var objects: [String: [String: [String: DBusValue]]] = [:]
        for (path, interfaces) in byPath {
            objects[path] = interfaces.stringKeyedDictionary?.compactMapValues(\.vardict) ?? [:]
        }
        self.objects = objects
    }
}

extension DBusConnection {
    /// Calls `GetManagedObjects` on `destination`'s object manager at `path` and decodes it.
    public func managedObjects(
        destination: String, path: String = "/",
        timeout: Duration = .seconds(25)
    ) async throws -> DBusManagedObjects {
        let reply = try await call(
            destination: destination, path: path, interface: DBusMatchRule.objectManager,
            method: "GetManagedObjects", expecting: "a{oa{sa{sv}}}", timeout: timeout)
        return try DBusManagedObjects(reply: reply)
    }
}
