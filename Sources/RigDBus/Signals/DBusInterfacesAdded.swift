/// `org.freedesktop.DBus.ObjectManager.InterfacesAdded(o path, a{sa{sv}} interfaces)`,
/// decoded; how BlueZ announces a discovered device (`org.bluez.Device1`).
public struct DBusInterfacesAdded: Sendable, Hashable {
    public var path: String
    /// Interface name → property name → value (variants unwrapped).
    public var interfaces: [String: [String: DBusValue]]

    /// Throws ``DBusMarshalError/signatureMismatch(expected:actual:)`` for any other signal shape.
    public init(_ signal: DBusSignal) throws(DBusMarshalError) {
        let expected = "oa{sa{sv}}"
        guard signal.args.dbusSignature == expected, let path = signal.args[0].string,
              let interfaces = signal.args[1].stringKeyedDictionary else {
            throw .signatureMismatch(expected: expected, actual: signal.args.dbusSignature)
        }
        self.path = path
        self.interfaces = interfaces.compactMapValues(\.vardict)
    }
}

/// `org.freedesktop.DBus.ObjectManager.InterfacesRemoved(o path, as interfaces)`, decoded.
public struct DBusInterfacesRemoved: Sendable, Hashable {
    public var path: String
    public var interfaces: [String]

    public init(_ signal: DBusSignal) throws(DBusMarshalError) {
        let expected = "oas"
        guard signal.args.dbusSignature == expected, let path = signal.args[0].string,
              let interfaces = signal.args[1].strings else {
            throw .signatureMismatch(expected: expected, actual: signal.args.dbusSignature)
        }
        self.path = path
        self.interfaces = interfaces
    }
}

/// `org.freedesktop.DBus.Properties.PropertiesChanged(s interface, a{sv} changed, as invalidated)`,
/// decoded; the object is the signal's `path`.
public struct DBusPropertiesChanged: Sendable, Hashable {
    public var path: String
    public var interface: String
    /// Property name → new value (variants unwrapped).
    public var changed: [String: DBusValue]
    public var invalidated: [String]

    public init(_ signal: DBusSignal) throws(DBusMarshalError) {
        let expected = "sa{sv}as"
        guard signal.args.dbusSignature == expected, let interface = signal.args[0].string,
              let changed = signal.args[1].vardict, let invalidated = signal.args[2].strings else {
            throw .signatureMismatch(expected: expected, actual: signal.args.dbusSignature)
        }
        self.path = signal.path
        self.interface = interface
        self.changed = changed
        self.invalidated = invalidated
    }
}
