/// One entry of a D-Bus dictionary (`{kv}`). Dictionaries are ordered lists on the wire, so
/// ``DBusValue/dictionary(key:value:_:)`` keeps them as an array of entries.
public struct DBusDictEntry: Sendable, Hashable {
    public var key: DBusValue
    public var value: DBusValue

    public init(_ key: DBusValue, _ value: DBusValue) {
        self.key = key
        self.value = value
    }
}
