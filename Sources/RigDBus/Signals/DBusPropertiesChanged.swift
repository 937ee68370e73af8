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
            let changed = signal.args[1].vardict, let invalidated = signal.args[2].strings
        else {
            throw .signatureMismatch(expected: expected, actual: signal.args.dbusSignature)
        }
        self.path = signal.path
        self.interface = interface
        self.changed = changed
        self.invalidated = invalidated
    }
}
