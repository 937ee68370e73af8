import CDBus

/// One method call awaiting its reply: the continuation to resume and the libdbus
/// `DBusPendingCall` it waits on. Lives on the bus thread; resumed exactly once.
final class PendingCallBox {
    let id: UInt64
    let expecting: String?
    var continuation: CheckedContinuation<[DBusValue], any Error>?
    var pending: OpaquePointer?
    weak var core: BusCore?
    /// Runs on the bus thread before the caller resumes (used to apply a reply in order
    /// with the signals around it).
    let onReply: ((BusCore, Result<[DBusValue], any Error>) -> Void)?

    init(
        id: UInt64, expecting: String?, continuation: CheckedContinuation<[DBusValue], any Error>,
        onReply: ((BusCore, Result<[DBusValue], any Error>) -> Void)?
    ) {
        self.id = id
        self.expecting = expecting
        self.continuation = continuation
        self.onReply = onReply
    }

    /// The reply arrived (or libdbus synthesised a NoReply / Disconnected error).
    /// `dbus_pending_call_steal_reply`, then the pending call's reference is dropped.
    func complete() {
        guard let pending else { return }
        self.pending = nil
        core?.calls[id] = nil
        let result: Result<[DBusValue], any Error>
        if let raw = dbus_pending_call_steal_reply(pending) {
            result = Self.decode(DBusMessageHandle(owning: raw), expecting: expecting)
        } else {
            result = .failure(DBusConnectionError.disconnected)
        }
        dbus_pending_call_unref(pending)
        if let core { onReply?(core, result) }
        resume(with: result)
    }

    /// The connection is closing: `dbus_pending_call_cancel` and fail the caller.
    func abandon(with error: any Error) {
        if let pending {
            dbus_pending_call_cancel(pending)
            dbus_pending_call_unref(pending)
            self.pending = nil
        }
        resume(with: .failure(error))
    }

    func resume(with result: Result<[DBusValue], any Error>) {
        continuation?.resume(with: result)
        continuation = nil
    }

    static func decode(_ reply: DBusMessageHandle, expecting: String?) -> Result<[DBusValue], any Error> {
        if reply.type == DBUS_MESSAGE_TYPE_ERROR {
            let args = (try? reply.read()) ?? []
            return .failure(DBusError(reply.errorName ?? DBusError.failed, args.first?.string ?? ""))
        }
        do {
            if let expecting { return .success(try reply.read(expecting: expecting)) }
            return .success(try reply.read())
        } catch {
            return .failure(error)
        }
    }
}
