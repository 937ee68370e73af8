import Synchronization

/// The reply to a deferred method call (``DBusMethod/deferred(in:out:_:)``), usable once from
/// any thread. If it is dropped unanswered, the caller gets `org.freedesktop.DBus.Error.Failed`
/// rather than waiting for its timeout.
public final class DBusReply: Sendable {
    private let core: BusCore
    private let id: UInt64
    private let answered = Mutex(false)

    init(core: BusCore, id: UInt64) {
        self.core = core
        self.id = id
    }

    deinit {
        if !answered.withLock({ $0 }) {
            let id = self.id
            core.submit { $0.finishDeferred(id, .failure(DBusError(DBusError.failed, "the handler dropped the call"))) }
        }
    }

    /// Replies with `values` (checked against the method's out signature).
    public func succeed(_ values: [DBusValue] = []) {
        finish(.success(values))
    }

    /// Replies with `error`.
    public func fail(_ error: DBusError) {
        finish(.failure(error))
    }

    private func finish(_ result: Result<[DBusValue], DBusError>) {
        let first = answered.withLock { answered in
            defer { answered = true }
            return !answered
        }
        guard first else { return }
        let id = self.id
        core.submit { $0.finishDeferred(id, result) }
    }
}
