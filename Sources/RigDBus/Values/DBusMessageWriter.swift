import CDBus

/// Marshals ``DBusValue``s into a message with `dbus_message_iter_append_*`.
///
/// Every value is validated in full before anything is appended: libdbus aborts the process
/// on an invalid string, path or signature, and a half-appended container would leave the
/// message unusable.
enum DBusMessageWriter {
    static func append(_ values: [DBusValue], to message: OpaquePointer) throws(DBusMarshalError) {
        for value in values {
            try validate(value)
            try DBusSyntax.checkSingleSignature(value.signature)
        }
        var iter = DBusMessageIter()
        dbus_message_iter_init_append(message, &iter)
        for value in values {
            try append(value, to: &iter)
        }
    }

    /// Checks what libdbus would otherwise abort on, recursively.
    static func validate(_ value: DBusValue) throws(DBusMarshalError) {
        switch value {
        case .byte, .boolean, .int16, .uint16, .int32, .uint32, .int64, .uint64, .double, .bytes:
            return
        case .string(let s):
            try DBusSyntax.checkString(s)
        case .objectPath(let p):
            try DBusSyntax.checkPath(p)
        case .signature(let g):
            try DBusSyntax.checkSignature(g)
        case .unixFD(let fd):
            if fd.rawValue < 0 { throw .invalidContainer("negative unix fd \(fd.rawValue)") }
        case .variant(let inner):
            try validate(inner)
        case .array(let element, let items):
            try DBusSyntax.checkSingleSignature(element)
            for item in items {
                guard item.signature == element else {
                    throw .signatureMismatch(expected: element, actual: item.signature)
                }
                try validate(item)
            }
        case .dictionary(let key, let valueType, let entries):
            guard DBusSignature.isBasic(key) else { throw .invalidContainer("dictionary key type \"\(key)\" is not basic") }
            try DBusSyntax.checkSingleSignature(valueType)
            for entry in entries {
                guard entry.key.signature == key else { throw .signatureMismatch(expected: key, actual: entry.key.signature) }
                guard entry.value.signature == valueType else {
                    throw .signatureMismatch(expected: valueType, actual: entry.value.signature)
                }
                try validate(entry.key)
                try validate(entry.value)
            }
        case .structure(let fields):
            if fields.isEmpty { throw .invalidContainer("a struct needs at least one field") }
            for field in fields { try validate(field) }
        }
    }

    private static func ok(_ result: dbus_bool_t) throws(DBusMarshalError) {
        if result == 0 { throw .outOfMemory }
    }

    private static func appendBasic<T: BitwiseCopyable>(_ type: Int32, _ value: T, to iter: inout DBusMessageIter) throws(DBusMarshalError) {
        var copy = value
        try ok(dbus_message_iter_append_basic(&iter, type, &copy))
    }

    private static func appendText(_ type: Int32, _ text: String, to iter: inout DBusMessageIter) throws(DBusMarshalError) {
        let result = text.withCString { pointer in
            var p: UnsafePointer<CChar>? = pointer
            return dbus_message_iter_append_basic(&iter, type, &p)
        }
        try ok(result)
    }

    private static func append(_ value: DBusValue, to iter: inout DBusMessageIter) throws(DBusMarshalError) {
        switch value {
        case .byte(let v): try appendBasic(cdbus_type_byte(), v, to: &iter)
        case .boolean(let v): try appendBasic(cdbus_type_boolean(), dbus_bool_t(v ? 1 : 0), to: &iter)
        case .int16(let v): try appendBasic(cdbus_type_int16(), v, to: &iter)
        case .uint16(let v): try appendBasic(cdbus_type_uint16(), v, to: &iter)
        case .int32(let v): try appendBasic(cdbus_type_int32(), v, to: &iter)
        case .uint32(let v): try appendBasic(cdbus_type_uint32(), v, to: &iter)
        case .int64(let v): try appendBasic(cdbus_type_int64(), v, to: &iter)
        case .uint64(let v): try appendBasic(cdbus_type_uint64(), v, to: &iter)
        case .double(let v): try appendBasic(cdbus_type_double(), v, to: &iter)
        case .unixFD(let fd): try appendBasic(cdbus_type_unix_fd(), fd.rawValue, to: &iter)
        case .string(let s): try appendText(cdbus_type_string(), s, to: &iter)
        case .objectPath(let p): try appendText(cdbus_type_object_path(), p, to: &iter)
        case .signature(let g): try appendText(cdbus_type_signature(), g, to: &iter)
        case .variant(let inner):
            try container(cdbus_type_variant(), inner.signature, in: &iter) { sub throws(DBusMarshalError) in
                try append(inner, to: &sub)
            }
        case .bytes(let bytes):
            try container(cdbus_type_array(), "y", in: &iter) { sub throws(DBusMarshalError) in
                guard !bytes.isEmpty else { return }
                let result = bytes.withUnsafeBufferPointer { buffer in
                    var base = buffer.baseAddress
                    return dbus_message_iter_append_fixed_array(&sub, cdbus_type_byte(), &base, Int32(buffer.count))
                }
                try ok(result)
            }
        case .array(let element, let items):
            try container(cdbus_type_array(), element, in: &iter) { sub throws(DBusMarshalError) in
                for item in items { try append(item, to: &sub) }
            }
        case .dictionary(let key, let valueType, let entries):
            try container(cdbus_type_array(), "{" + key + valueType + "}", in: &iter) { sub throws(DBusMarshalError) in
                for entry in entries {
                    try container(cdbus_type_dict_entry(), nil, in: &sub) { pair throws(DBusMarshalError) in
                        try append(entry.key, to: &pair)
                        try append(entry.value, to: &pair)
                    }
                }
            }
        case .structure(let fields):
            try container(cdbus_type_struct(), nil, in: &iter) { sub throws(DBusMarshalError) in
                for field in fields { try append(field, to: &sub) }
            }
        }
    }

    /// `dbus_message_iter_open_container` / `close_container`, abandoning the container
    /// (`dbus_message_iter_abandon_container_if_open`) when filling it fails.
    private static func container(
        _ type: Int32, _ signature: String?, in iter: inout DBusMessageIter,
        _ fill: (inout DBusMessageIter) throws(DBusMarshalError) -> Void
    ) throws(DBusMarshalError) {
        var sub = DBusMessageIter()
        let opened: dbus_bool_t
        if let signature {
            opened = signature.withCString { dbus_message_iter_open_container(&iter, type, $0, &sub) }
        } else {
            opened = dbus_message_iter_open_container(&iter, type, nil, &sub)
        }
        try ok(opened)
        do {
            try fill(&sub)
        } catch {
            dbus_message_iter_abandon_container_if_open(&iter, &sub)
            throw error
        }
        guard dbus_message_iter_close_container(&iter, &sub) != 0 else {
            dbus_message_iter_abandon_container_if_open(&iter, &sub)
            throw .outOfMemory
        }
    }
}
