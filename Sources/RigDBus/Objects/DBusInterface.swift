/// One interface of an exported object: its methods, properties and (for introspection)
/// signals.
public struct DBusInterface: Sendable {
    public var name: String
    public var methods: [String: DBusMethod]
    public var properties: [String: DBusProperty]
    /// Signal member → argument signature; used only for `Introspect`.
    public var signals: [String: String]

    public init(
        _ name: String, methods: [String: DBusMethod] = [:], properties: [String: DBusProperty] = [:],
        signals: [String: String] = [:]
    ) {
        self.name = name
        self.methods = methods
        self.properties = properties
        self.signals = signals
    }

    /// The current values of all properties whose getter returns the declared type.
    func propertyValues() -> [String: DBusValue] {
        var values: [String: DBusValue] = [:]
        for (name, property) in properties {
            if let value = try? property.currentValue(name: name) { values[name] = value }
        }
        return values
    }
}
