import CDBus
import Logging
import RigSyscall
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The state behind one ``DBusConnection``, owned by its bus thread.
///
/// Invariant (why `@unchecked Sendable` is sound): everything except `inbox` and the `let`
/// constants is touched only on the bus thread: by ``run()``, by jobs it runs, and by the
/// libdbus callbacks it triggers. Other threads reach it only through ``submit(_:)``.
final class BusCore: @unchecked Sendable {
    typealias Job = @Sendable (BusCore) -> Void

    struct Inbox {
        var jobs: [Job] = []
        var stopRequested = false
        /// Set once the thread has shut down; `submit` then refuses jobs.
        var stopped = false
    }

    let inbox = Mutex(Inbox())
    let wakeRead: Int32
    let wakeWrite: Int32
    let logger: Logger

    // Bus-thread state.
    var connection: OpaquePointer?
    var disconnected = false
    /// Replies that matched no pending call (a peer answered a no-reply call, or too late).
    var strayReplies = 0
    var watches: [OpaquePointer] = []
    var timeoutDeadlines: [OpaquePointer: ContinuousClock.Instant] = [:]
    var nextID: UInt64 = 0
    var calls: [UInt64: PendingCallBox] = [:]
    var subscriptions: [UInt64: SignalSubscription] = [:]
    var nameOwners: [String: String] = [:]
    var watchedNames: [String: Int] = [:]
    var objects: [String: DBusObject] = [:]
    var deferredReplies: [UInt64: (call: DBusMessageHandle, outSignature: String)] = [:]

    init(connection: OpaquePointer, logger: Logger) throws(DBusConnectionError) {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { throw .threadStartFailed(errno) }
        for fd in fds {
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        }
        wakeRead = fds[0]
        wakeWrite = fds[1]
        self.connection = connection
        self.logger = logger
    }

    /// Only reached without a shutdown when the connection failed to start: the thread's
    /// shutdown closes the pipe otherwise.
    deinit {
        inbox.withLock { inbox in
            if !inbox.stopped {
                inbox.stopped = true
                close(wakeRead)
                close(wakeWrite)
            }
        }
    }

    func makeID() -> UInt64 {
        nextID &+= 1
        return nextID
    }

    /// Queues `job` for the bus thread and wakes it. Returns false once the thread has
    /// stopped (the job will never run).
    @discardableResult
    func submit(_ job: @escaping Job) -> Bool {
        inbox.withLock { inbox in
            guard !inbox.stopped else { return false }
            inbox.jobs.append(job)
            wakeLocked()
            return true
        }
    }

    /// Asks the thread to close the connection and exit.
    func requestStop() {
        inbox.withLock { inbox in
            guard !inbox.stopped else { return }
            inbox.stopRequested = true
            wakeLocked()
        }
    }

    /// Wakes the poll loop (libdbus's wakeup-main and dispatch-status callbacks use this too).
    func wake() {
        inbox.withLock { inbox in
            if !inbox.stopped { wakeLocked() }
        }
    }

    /// Must be called with `inbox` locked, so the pipe is never written after it is closed.
    private func wakeLocked() {
        var byte: UInt8 = 1
        _ = Syscall.call { write(wakeWrite, &byte, 1) }  // EAGAIN means a wakeup is already pending
    }

    private func drainWakePipe() {
        var buffer = [UInt8](repeating: 0, count: 64)
        while case .success(let n) = Syscall.call({ read(wakeRead, &buffer, buffer.count) }), n > 0 {}
    }

    // MARK: - The loop

    /// The bus thread's body: run jobs, dispatch, poll, handle watches and timeouts.
    func run() {
        while true {
            let (jobs, stop) = inbox.withLock { inbox in
                let jobs = inbox.jobs
                inbox.jobs = []
                return (jobs, inbox.stopRequested)
            }
            for job in jobs { job(self) }
            if stop { break }
            dispatchAll()
            pollOnce()
        }
        shutdown()
    }

    private func dispatchAll() {
        guard let connection else { return }
        while dbus_connection_dispatch(connection) == DBUS_DISPATCH_DATA_REMAINS {}
    }

    private func pollOnce() {
        let polled = watches.filter { dbus_watch_get_enabled($0) != 0 }
        var fds = [pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)]
        for watch in polled {
            let flags = dbus_watch_get_flags(watch)
            var events: Int16 = 0
            if flags & DBUS_WATCH_READABLE.rawValue != 0 { events |= Int16(POLLIN) }
            if flags & DBUS_WATCH_WRITABLE.rawValue != 0 { events |= Int16(POLLOUT) }
            fds.append(pollfd(fd: dbus_watch_get_unix_fd(watch), events: events, revents: 0))
        }
        var result: Int32 = 0
        switch Syscall.call({ poll(&fds, nfds_t(fds.count), pollTimeoutMilliseconds()) }) {
        case .success(let ready): result = ready
        case .failure(let error): logger.error("poll failed", metadata: ["errno": "\(error)"])
        }
        if fds[0].revents != 0 { drainWakePipe() }
        if result > 0 {
            for (index, watch) in polled.enumerated() {
                let revents = fds[index + 1].revents
                // Handling one watch can remove another: only touch watches still registered.
                guard revents != 0, watches.contains(watch) else { continue }
                var flags: UInt32 = 0
                if revents & Int16(POLLIN) != 0 { flags |= DBUS_WATCH_READABLE.rawValue }
                if revents & Int16(POLLOUT) != 0 { flags |= DBUS_WATCH_WRITABLE.rawValue }
                if revents & Int16(POLLERR) != 0 { flags |= DBUS_WATCH_ERROR.rawValue }
                if revents & Int16(POLLHUP) != 0 { flags |= DBUS_WATCH_HANGUP.rawValue }
                _ = dbus_watch_handle(watch, flags)
            }
        }
        handleExpiredTimeouts()
    }

    private func pollTimeoutMilliseconds() -> Int32 {
        guard let next = timeoutDeadlines.values.min() else { return -1 }
        let remaining = ContinuousClock.now.duration(to: next)
        if remaining <= .zero { return 0 }
        let (seconds, attoseconds) = remaining.components
        let ms = seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        return Int32(clamping: ms)
    }

    private func handleExpiredTimeouts() {
        let now = ContinuousClock.now
        let expired = timeoutDeadlines.filter { $0.value <= now }.map(\.key)
        for timeout in expired {
            // An earlier handler may have removed or re-armed this one.
            guard let deadline = timeoutDeadlines[timeout], deadline <= now else { continue }
            timeoutDeadlines[timeout] = now + .milliseconds(Int(dbus_timeout_get_interval(timeout)))
            _ = dbus_timeout_handle(timeout)
        }
    }

    // MARK: - Shutdown

    private func shutdown() {
        for (_, box) in calls { box.abandon(with: DBusConnectionError.closed) }
        calls = [:]
        finishSubscriptions()
        deferredReplies = [:]
        if let connection {
            dbus_connection_close(connection)
            dbus_connection_unref(connection)
        }
        connection = nil
        objects = [:]
        let leftovers = inbox.withLock { inbox in
            inbox.stopped = true
            close(wakeRead)
            close(wakeWrite)
            let jobs = inbox.jobs
            inbox.jobs = []
            return jobs
        }
        // Jobs see `connection == nil` and fail their callers with `.closed`.
        for job in leftovers { job(self) }
    }

    /// The error for work that arrives when there is no usable connection.
    var unavailableError: DBusConnectionError {
        connection == nil ? .closed : .disconnected
    }
}
