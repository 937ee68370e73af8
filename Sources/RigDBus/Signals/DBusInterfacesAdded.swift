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
            let interfaces = signal.args[1].stringKeyedDictionary
        else {
            throw .signatureMismatch(expected: expected, actual: signal.args.dbusSignature)
        }
        self.path = path
        self.interfaces = interfaces.compactMapValues(\.vardict)
    }
}
