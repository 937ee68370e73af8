/// One D-Bus value, typed the way it travels on the wire.
///
/// Containers keep their element signature so an empty array still marshals with the right
/// type (`as` and `ao` differ even when empty). `ay` has its own case, `bytes`, because it is
/// marshalled as one fixed array (`dbus_message_iter_append_fixed_array`); an `.array("y", …)`
/// of `.byte` values marshals to the same wire value, but reading always yields `.bytes`.
public indirect enum DBusValue: Sendable, Hashable {
    case byte(UInt8)
    case boolean(Bool)
    case int16(Int16)
    case uint16(UInt16)
    case int32(Int32)
    case uint32(UInt32)
    case int64(Int64)
    case uint64(UInt64)
    case double(Double)
    case string(String)
    case objectPath(String)
    case signature(String)
    /// `h`: a unix file descriptor. See ``DBusUnixFD`` for who owns it.
    case unixFD(DBusUnixFD)
    /// `v`: any single value, carrying its own signature.
    case variant(DBusValue)
    /// `ay`.
    case bytes([UInt8])
    /// `a<element>`: every element must have signature `element`, a single complete type.
    case array(element: String, [DBusValue])
    /// `a{<key><value>}`: `key` must be a basic type signature.
    case dictionary(key: String, value: String, [DBusDictEntry])
    /// `(…)`: a struct with at least one field.
    case structure([DBusValue])

    /// The value's D-Bus type signature, such as `a{sv}`.
    public var signature: String {
        switch self {
        case .byte: "y"
        case .boolean: "b"
        case .int16: "n"
        case .uint16: "q"
        case .int32: "i"
        case .uint32: "u"
        case .int64: "x"
        case .uint64: "t"
        case .double: "d"
        case .string: "s"
        case .objectPath: "o"
        case .signature: "g"
        case .unixFD: "h"
        case .variant: "v"
        case .bytes: "ay"
        case .array(let element, _): "a" + element
        case .dictionary(let key, let value, _): "a{" + key + value + "}"
        case .structure(let fields): "(" + fields.map(\.signature).joined() + ")"
        }
    }
}

extension Array where Element == DBusValue {
    /// The concatenated signature of a message body holding these values.
    public var dbusSignature: String { map(\.signature).joined() }
}
