import CDBus

/// Checks names, paths, strings and signatures with libdbus's own validators before they are
/// handed to a libdbus call that would abort the process on invalid input.
enum DBusSyntax {
    /// `dbus_validate_utf8`, plus no NUL byte (libdbus strings are NUL-terminated).
    static func checkString(_ s: String) throws(DBusMarshalError) {
        if s.utf8.contains(0) { throw .invalidString(s) }
        let ok = s.withCString { dbus_validate_utf8($0, nil) } != 0
        if !ok { throw .invalidString(s) }
    }

    /// `dbus_validate_utf8` on raw bytes (how text from outside a Swift `String` is checked).
    static func isValidUTF8(_ bytes: [UInt8]) -> Bool {
        if bytes.contains(0) { return false }
        return (bytes + [0]).withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { dbus_validate_utf8($0.baseAddress, nil) != 0 }
        }
    }

    /// `dbus_validate_path`.
    static func checkPath(_ path: String) throws(DBusMarshalError) {
        guard !path.utf8.contains(0), path.withCString({ dbus_validate_path($0, nil) }) != 0 else {
            throw .invalidObjectPath(path)
        }
    }

    /// `dbus_signature_validate` (any number of complete types).
    static func checkSignature(_ signature: String) throws(DBusMarshalError) {
        guard !signature.utf8.contains(0), signature.withCString({ dbus_signature_validate($0, nil) }) != 0 else {
            throw .invalidSignature(signature)
        }
    }

    /// `dbus_signature_validate_single` (exactly one complete type).
    static func checkSingleSignature(_ signature: String) throws(DBusMarshalError) {
        guard !signature.utf8.contains(0), signature.withCString({ dbus_signature_validate_single($0, nil) }) != 0 else {
            throw .invalidSignature(signature)
        }
    }

    /// `dbus_validate_interface`.
    static func checkInterface(_ name: String) throws(DBusMarshalError) {
        try check(name, kind: "interface", dbus_validate_interface)
    }

    /// `dbus_validate_member`.
    static func checkMember(_ name: String) throws(DBusMarshalError) {
        try check(name, kind: "member", dbus_validate_member)
    }

    /// `dbus_validate_bus_name`.
    static func checkBusName(_ name: String) throws(DBusMarshalError) {
        try check(name, kind: "bus", dbus_validate_bus_name)
    }

    /// `dbus_validate_error_name`.
    static func checkErrorName(_ name: String) throws(DBusMarshalError) {
        try check(name, kind: "error", dbus_validate_error_name)
    }

    private static func check(
        _ name: String, kind: String,
        _ validate: (UnsafePointer<CChar>?, UnsafeMutablePointer<CDBus.DBusError>?) -> dbus_bool_t
    ) throws(DBusMarshalError) {
        guard !name.utf8.contains(0), name.withCString({ validate($0, nil) }) != 0 else {
            throw .invalidName(kind: kind, name: name)
        }
    }
}
