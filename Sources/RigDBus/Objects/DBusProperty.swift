/// A property of an exported interface, backed by closures so its owner keeps the state
/// (guarded by its own lock: the closures run on the bus thread).
///
/// `Properties.Set` on a property without `set` fails with `PropertyReadOnly`; a value of the
/// wrong type with `InvalidArgs`; a setter throwing ``DBusError`` replies with that error.
/// Setting does not emit `PropertiesChanged` by itself: call
/// ``DBusConnection/emitPropertiesChanged(path:interface:changed:invalidated:)`` when the
/// value really changed.
public struct DBusProperty: Sendable {
    public var signature: String
    public var get: @Sendable () -> DBusValue
    public var set: (@Sendable (DBusValue) throws -> Void)?

    public init(
        signature: String, get: @escaping @Sendable () -> DBusValue,
        set: (@Sendable (DBusValue) throws -> Void)? = nil
    ) {
        self.signature = signature
        self.get = get
        self.set = set
    }

    /// A read-only property with a fixed value.
    public static func constant(_ value: DBusValue) -> DBusProperty {
        DBusProperty(signature: value.signature, get: { value })
    }

    /// The getter's value, checked against the declared signature.
    func currentValue(name: String) throws(DBusError) -> DBusValue {
        let value = get()
        guard value.signature == signature else {
            throw DBusError(DBusError.failed, "property \(name) has type \(value.signature), declared \(signature)")
        }
        return value
    }
}
