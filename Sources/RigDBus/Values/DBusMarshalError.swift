/// Why a value could not be written to or read from a message. Thrown instead of letting
/// libdbus abort the process on invalid input.
public enum DBusMarshalError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A string is not valid UTF-8 (`dbus_validate_utf8`) or contains a NUL byte.
    case invalidString(String)
    /// Not a valid object path (`dbus_validate_path`).
    case invalidObjectPath(String)
    /// Not a valid type signature (`dbus_signature_validate`) or too deeply nested.
    case invalidSignature(String)
    /// Not a valid interface, member, bus or error name (`dbus_validate_*`).
    case invalidName(kind: String, name: String)
    /// A container element, a reply or a property does not have the declared signature.
    case signatureMismatch(expected: String, actual: String)
    /// A struct with no fields, or a dictionary key that is not a basic type.
    case invalidContainer(String)
    /// The connection cannot pass unix fds (`dbus_connection_can_send_type`).
    case unixFDsUnsupported
    /// libdbus ran out of memory while building or reading the message.
    case outOfMemory

    public var description: String {
        switch self {
        case .invalidString(let s): "invalid D-Bus string (not UTF-8 or contains NUL): \(s.debugDescription)"
        case .invalidObjectPath(let p): "invalid D-Bus object path \(p.debugDescription)"
        case .invalidSignature(let s): "invalid D-Bus signature \(s.debugDescription)"
        case .invalidName(let kind, let name): "invalid D-Bus \(kind) name \(name.debugDescription)"
        case .signatureMismatch(let expected, let actual): "D-Bus signature mismatch: expected \"\(expected)\", got \"\(actual)\""
        case .invalidContainer(let why): "invalid D-Bus container: \(why)"
        case .unixFDsUnsupported: "this D-Bus connection cannot pass unix file descriptors"
        case .outOfMemory: "libdbus ran out of memory"
        }
    }
}
