import CDBus

/// Owns one reference to a libdbus `DBusMessage` and releases it (`dbus_message_unref`) on
/// deinit. Not Sendable: messages stay on the thread that made or received them (the bus
/// thread, or a test building one by hand).
final class DBusMessageHandle {
    let raw: OpaquePointer

    /// Takes over a reference the caller owns.
    init(owning raw: OpaquePointer) {
        self.raw = raw
    }

    /// Adds a reference (`dbus_message_ref`) to a message borrowed from libdbus.
    init(retaining raw: OpaquePointer) {
        self.raw = dbus_message_ref(raw)
    }

    deinit {
        dbus_message_unref(raw)
    }

    /// `dbus_message_new_method_call`, after validating every name.
    static func methodCall(destination: String?, path: String, interface: String?, method: String) throws(DBusMarshalError) -> DBusMessageHandle {
        if let destination { try DBusSyntax.checkBusName(destination) }
        try DBusSyntax.checkPath(path)
        if let interface { try DBusSyntax.checkInterface(interface) }
        try DBusSyntax.checkMember(method)
        guard let raw = dbus_message_new_method_call(destination, path, interface, method) else { throw .outOfMemory }
        return DBusMessageHandle(owning: raw)
    }

    /// `dbus_message_new_signal`, after validating every name.
    static func signal(path: String, interface: String, member: String) throws(DBusMarshalError) -> DBusMessageHandle {
        try DBusSyntax.checkPath(path)
        try DBusSyntax.checkInterface(interface)
        try DBusSyntax.checkMember(member)
        guard let raw = dbus_message_new_signal(path, interface, member) else { throw .outOfMemory }
        return DBusMessageHandle(owning: raw)
    }

    /// `dbus_message_new_method_return`.
    func methodReturn() throws(DBusMarshalError) -> DBusMessageHandle {
        try checkReplyable()
        guard let raw = dbus_message_new_method_return(raw) else { throw .outOfMemory }
        return DBusMessageHandle(owning: raw)
    }

    /// `dbus_message_new_error`; an invalid error name or message text is replaced by
    /// `org.freedesktop.DBus.Error.Failed` / an empty text rather than aborting.
    func errorReply(_ error: DBusError) throws(DBusMarshalError) -> DBusMessageHandle {
        try checkReplyable()
        let name = (try? DBusSyntax.checkErrorName(error.name)) != nil ? error.name : DBusError.failed
        let text = (try? DBusSyntax.checkString(error.message)) != nil ? error.message : ""
        guard let reply = dbus_message_new_error(raw, name, text) else { throw .outOfMemory }
        return DBusMessageHandle(owning: reply)
    }

    /// libdbus aborts when replying to a message without a serial (one never sent).
    private func checkReplyable() throws(DBusMarshalError) {
        if dbus_message_get_serial(raw) == 0 { throw .invalidContainer("cannot reply to a message that was never sent") }
    }

    /// `dbus_message_set_serial`: lets a test reply to a message it built by hand.
    func setSerial(_ serial: UInt32) {
        dbus_message_set_serial(raw, serial)
    }

    var type: Int32 { dbus_message_get_type(raw) }
    var path: String? { dbus_message_get_path(raw).map { String(cString: $0) } }
    var interface: String? { dbus_message_get_interface(raw).map { String(cString: $0) } }
    var member: String? { dbus_message_get_member(raw).map { String(cString: $0) } }
    var sender: String? { dbus_message_get_sender(raw).map { String(cString: $0) } }
    var errorName: String? { dbus_message_get_error_name(raw).map { String(cString: $0) } }
    /// `dbus_message_get_signature`: the body's signature.
    var signature: String { dbus_message_get_signature(raw).map { String(cString: $0) } ?? "" }
    /// `dbus_message_get_no_reply`: the caller asked for no reply at all.
    var noReply: Bool { dbus_message_get_no_reply(raw) != 0 }

    /// `dbus_message_set_no_reply`.
    func setNoReply() {
        dbus_message_set_no_reply(raw, 1)
    }

    /// Appends `values` to the body after validating them completely (see ``DBusMessageWriter``).
    func append(_ values: [DBusValue]) throws(DBusMarshalError) {
        try DBusMessageWriter.append(values, to: raw)
    }

    /// Reads the whole body.
    func read() throws(DBusMarshalError) -> [DBusValue] {
        try DBusMessageReader.read(raw)
    }

    /// Reads the body, first checking that its signature is `signature`.
    func read(expecting signature: String) throws(DBusMarshalError) -> [DBusValue] {
        let actual = self.signature
        guard actual == signature else { throw .signatureMismatch(expected: signature, actual: actual) }
        return try DBusMessageReader.read(raw)
    }
}
