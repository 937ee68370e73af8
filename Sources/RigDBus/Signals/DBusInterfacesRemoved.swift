/// `org.freedesktop.DBus.ObjectManager.InterfacesRemoved(o path, as interfaces)`, decoded.
public struct DBusInterfacesRemoved: Sendable, Hashable {
    public var path: String
    public var interfaces: [String]

    public init(_ signal: DBusSignal) throws(DBusMarshalError) {
        let expected = "oas"
        guard signal.args.dbusSignature == expected, let path = signal.args[0].string,
            let interfaces = signal.args[1].strings
        else {
            throw .signatureMismatch(expected: expected, actual: signal.args.dbusSignature)
        }
        self.path = path
        self.interfaces = interfaces
    }
}
