import CDBus

#if canImport(Glibc)
    import Glibc
#endif

/// Unmarshals a message body into ``DBusValue``s with `dbus_message_iter_get_*`.
///
/// libdbus has already validated every received message, so the reader only has to map
/// types; it never calls a getter on the wrong type (libdbus would abort). Unix fds read so far
/// are closed again if reading fails.
enum DBusMessageReader {
    static func read(_ message: OpaquePointer) throws(DBusMarshalError) -> [DBusValue] {
        var reader = Reader()
        do {
            var iter = DBusMessageIter()
            guard dbus_message_iter_init(message, &iter) != 0 else { return [] }
            return try reader.readAll(&iter)
        } catch {
            reader.closeDescriptors()
            throw error
        }
    }

    private struct Reader {
        var descriptors: [Int32] = []

        func closeDescriptors() {
            for fd in descriptors { _ = close(fd) }
        }

        mutating func readAll(_ iter: inout DBusMessageIter) throws(DBusMarshalError) -> [DBusValue] {
            var values: [DBusValue] = []
            while dbus_message_iter_get_arg_type(&iter) != cdbus_type_invalid() {
                values.append(try readValue(&iter))
                dbus_message_iter_next(&iter)
            }
            return values
        }

        func basic<T: BitwiseCopyable>(_ iter: inout DBusMessageIter, _ initial: T) -> T {
            var value = initial
            dbus_message_iter_get_basic(&iter, &value)
            return value
        }

        func text(_ iter: inout DBusMessageIter) -> String {
            var pointer: UnsafePointer<CChar>? = nil
            dbus_message_iter_get_basic(&iter, &pointer)
            return pointer.map { String(cString: $0) } ?? ""
        }

        /// `dbus_message_iter_get_signature`, freed with `dbus_free`.
        func signature(_ iter: inout DBusMessageIter) throws(DBusMarshalError) -> String {
            guard let raw = dbus_message_iter_get_signature(&iter) else { throw .outOfMemory }
            defer { dbus_free(raw) }
            return String(cString: raw)
        }

        mutating func readValue(_ iter: inout DBusMessageIter) throws(DBusMarshalError) -> DBusValue {
            let type = dbus_message_iter_get_arg_type(&iter)
            switch type {
            case cdbus_type_byte(): return .byte(basic(&iter, UInt8(0)))
            case cdbus_type_boolean(): return .boolean(basic(&iter, dbus_bool_t(0)) != 0)
            case cdbus_type_int16(): return .int16(basic(&iter, Int16(0)))
            case cdbus_type_uint16(): return .uint16(basic(&iter, UInt16(0)))
            case cdbus_type_int32(): return .int32(basic(&iter, Int32(0)))
            case cdbus_type_uint32(): return .uint32(basic(&iter, UInt32(0)))
            case cdbus_type_int64(): return .int64(basic(&iter, Int64(0)))
            case cdbus_type_uint64(): return .uint64(basic(&iter, UInt64(0)))
            case cdbus_type_double(): return .double(basic(&iter, Double(0)))
            case cdbus_type_string(): return .string(text(&iter))
            case cdbus_type_object_path(): return .objectPath(text(&iter))
            case cdbus_type_signature(): return .signature(text(&iter))
            case cdbus_type_unix_fd():
                let fd = basic(&iter, Int32(-1))
                if fd >= 0 { descriptors.append(fd) }
                return .unixFD(DBusUnixFD(fd))
            case cdbus_type_variant():
                var sub = DBusMessageIter()
                dbus_message_iter_recurse(&iter, &sub)
                return .variant(try readValue(&sub))
            case cdbus_type_struct():
                var sub = DBusMessageIter()
                dbus_message_iter_recurse(&iter, &sub)
                return .structure(try readAll(&sub))
            case cdbus_type_array():
                return try readArray(&iter)
            default:
                throw .invalidSignature(String(UnicodeScalar(UInt8(truncatingIfNeeded: type))))
            }
        }

        mutating func readArray(_ iter: inout DBusMessageIter) throws(DBusMarshalError) -> DBusValue {
            let full = try signature(&iter)
            let element = String(full.dropFirst())
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(&iter, &sub)
            if element == "y" {
                guard dbus_message_iter_get_arg_type(&sub) == cdbus_type_byte() else { return .bytes([]) }
                var pointer: UnsafeMutableRawPointer? = nil
                var count: Int32 = 0
                dbus_message_iter_get_fixed_array(&sub, &pointer, &count)
                guard let pointer, count > 0 else { return .bytes([]) }
                return .bytes(Array(UnsafeRawBufferPointer(start: pointer, count: Int(count))))
            }
            if element.hasPrefix("{") {
                guard let (key, value) = DBusSignature.keyAndValue(String(element.dropFirst().dropLast())) else {
                    throw .invalidSignature(full)
                }
                var entries: [DBusDictEntry] = []
                while dbus_message_iter_get_arg_type(&sub) == cdbus_type_dict_entry() {
                    var pair = DBusMessageIter()
                    dbus_message_iter_recurse(&sub, &pair)
                    let k = try readValue(&pair)
                    guard dbus_message_iter_next(&pair) != 0 else { throw .invalidSignature(full) }
                    let v = try readValue(&pair)
                    entries.append(DBusDictEntry(k, v))
                    dbus_message_iter_next(&sub)
                }
                return .dictionary(key: key, value: value, entries)
            }
            return .array(element: element, try readAll(&sub))
        }
    }
}
