extension DBusConnection {
    /// Calls a method and returns the reply's arguments.
    ///
    /// Wraps `dbus_connection_send_with_reply` + `dbus_pending_call_set_notify`; the call fails
    /// with ``DBusError`` `NoReply` (``DBusError/isTimeout``) when no reply comes within
    /// `timeout`. With `expecting`, a reply whose signature differs throws
    /// ``DBusMarshalError/signatureMismatch(expected:actual:)`` (its fds are never opened).
    /// Cancelling the calling task cancels the pending call (`dbus_pending_call_cancel`) and
    /// throws `CancellationError`; the callee may still have acted on it.
    public func call(
        destination: String?, path: String, interface: String?, method: String,
        args: [DBusValue] = [], expecting signature: String? = nil, timeout: Duration = .seconds(25)
    ) async throws -> [DBusValue] {
        let milliseconds = Self.milliseconds(timeout)
        let cancellation = CallCancellation()
        let core = self.core
        return try await withTaskCancellationHandler {
            try await startCall { core, continuation in
                do {
                    let message = try DBusMessageHandle.methodCall(
                        destination: destination, path: path,
                        interface: interface, method: method)
                    try message.append(args)
                    core.startCall(
                        message, timeoutMilliseconds: milliseconds, expecting: signature,
                        continuation: continuation, cancellation: cancellation)
                } catch {
                    continuation.resume(throwing: error)
                }
            }
        } onCancel: {
            if let id = cancellation.cancel() {
                core.submit { $0.cancelCall(id) }
            }
        }
    }

    /// Sends a method call flagged no-reply (`dbus_message_set_no_reply` + `dbus_connection_send`):
    /// the callee sends nothing back. Returns once the message is queued.
    public func send(
        destination: String?, path: String, interface: String?, method: String,
        args: [DBusValue] = []
    ) async throws {
        try await perform { core in
            let message = try DBusMessageHandle.methodCall(
                destination: destination, path: path,
                interface: interface, method: method)
            try message.append(args)
            message.setNoReply()
            try core.sendNoReply(message)
        }
    }

    /// Emits a signal from `path` (`dbus_message_new_signal` + `dbus_connection_send`).
    /// Returns once the message is queued.
    public func emitSignal(path: String, interface: String, member: String, args: [DBusValue] = []) async throws {
        try await perform { core in
            let message = try DBusMessageHandle.signal(path: path, interface: interface, member: member)
            try message.append(args)
            try core.sendNoReply(message)
        }
    }

    /// Emits `org.freedesktop.DBus.Properties.PropertiesChanged(interface, changed, invalidated)`
    /// from `path`: how a BlueZ GATT server notifies (`{"Value": ay}` on a characteristic).
    public func emitPropertiesChanged(
        path: String, interface: String, changed: [String: DBusValue],
        invalidated: [String] = []
    ) async throws {
        try await emitSignal(
            path: path, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged",
            args: [.string(interface), .vardict(changed), .strings(invalidated)])
    }
}
