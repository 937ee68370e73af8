import CDBus

extension BusCore {
    /// Sends a method call and arranges for `continuation` to be resumed with its reply:
    /// `dbus_connection_send_with_reply` + `dbus_pending_call_set_notify`. Never blocks.
    func startCall(
        _ message: DBusMessageHandle, timeoutMilliseconds: Int32, expecting: String?,
        continuation: CheckedContinuation<[DBusValue], any Error>,
        cancellation: CallCancellation? = nil,
        onReply: ((BusCore, Result<[DBusValue], any Error>) -> Void)? = nil
    ) {
        if cancellation?.isCancelled == true {
            continuation.resume(throwing: CancellationError())
            return
        }
        guard let connection, !disconnected else {
            continuation.resume(throwing: unavailableError)
            return
        }
        if let problem = cannotSend(message, on: connection) {
            continuation.resume(throwing: problem)
            return
        }
        var pending: OpaquePointer?
        guard dbus_connection_send_with_reply(connection, message.raw, &pending, timeoutMilliseconds) != 0 else {
            continuation.resume(throwing: DBusConnectionError.outOfMemory)
            return
        }
        // TRUE with no pending call means the connection is already disconnected.
        guard let pending else {
            continuation.resume(throwing: DBusConnectionError.disconnected)
            return
        }
        let box = PendingCallBox(id: makeID(), expecting: expecting, continuation: continuation, onReply: onReply)
        box.core = self
        box.pending = pending
        let notifyOK = dbus_pending_call_set_notify(
            pending,
            { _, data in
                guard let data else { return }
                Unmanaged<PendingCallBox>.fromOpaque(data).takeUnretainedValue().complete()
            },
            Unmanaged.passRetained(box).toOpaque(),
            { data in
                if let data { Unmanaged<PendingCallBox>.fromOpaque(data).release() }
            })
        guard notifyOK != 0 else {
            box.abandon(with: DBusConnectionError.outOfMemory)
            return
        }
        calls[box.id] = box
        if dbus_pending_call_get_completed(pending) != 0 {
            box.complete()
        } else if let cancellation, !cancellation.started(box.id) {
            cancelCall(box.id)
        }
    }

    /// The caller's task was cancelled: `dbus_pending_call_cancel` and fail it with
    /// `CancellationError` (a reply arriving later is dropped by libdbus).
    func cancelCall(_ id: UInt64) {
        guard let box = calls.removeValue(forKey: id) else { return }
        box.abandon(with: CancellationError())
    }

    /// Sends a message that expects no reply (`dbus_connection_send`).
    func sendNoReply(_ message: DBusMessageHandle) throws {
        guard let connection, !disconnected else { throw unavailableError }
        if let problem = cannotSend(message, on: connection) { throw problem }
        guard dbus_connection_send(connection, message.raw, nil) != 0 else { throw DBusConnectionError.outOfMemory }
    }

    /// A message carrying unix fds on a connection that cannot pass them would be dropped by
    /// libdbus as if disconnected (`dbus_connection_can_send_type`).
    private func cannotSend(_ message: DBusMessageHandle, on connection: OpaquePointer) -> (any Error)? {
        if dbus_message_contains_unix_fds(message.raw) != 0,
            dbus_connection_can_send_type(connection, cdbus_type_unix_fd()) == 0
        {
            return DBusMarshalError.unixFDsUnsupported
        }
        return nil
    }
}
