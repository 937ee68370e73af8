import CDBus

#if canImport(Glibc)
    import Glibc
#endif

// libdbus's main-loop integration: C callbacks that find their BusCore through `user_data`.
// Each registration holds its own retain of the core, released by libdbus through the free
// function when the connection is finalised, so a callback can never see a dead core.

extension BusCore {
    static func from(_ data: UnsafeMutableRawPointer?) -> BusCore? {
        data.map { Unmanaged<BusCore>.fromOpaque($0).takeUnretainedValue() }
    }

    private func retainedSelf() -> UnsafeMutableRawPointer {
        Unmanaged.passRetained(self).toOpaque()
    }

    /// Installs watch, timeout, wakeup and dispatch-status functions and the signal filter.
    /// Called once, before the bus thread starts.
    func installCallbacks(on connection: OpaquePointer) throws(DBusConnectionError) {
        let release: DBusFreeFunction = { data in
            if let data { Unmanaged<BusCore>.fromOpaque(data).release() }
        }
        // dbus_connection_set_watch_functions
        let watchesOK = dbus_connection_set_watch_functions(
            connection,
            { watch, data in
                guard let watch, let core = BusCore.from(data) else { return 0 }
                core.watches.append(watch)
                return 1
            },
            { watch, data in
                guard let watch, let core = BusCore.from(data) else { return }
                core.watches.removeAll { $0 == watch }
            },
            { _, data in BusCore.from(data)?.wake() },
            retainedSelf(), release)
        // dbus_connection_set_timeout_functions
        let timeoutsOK = dbus_connection_set_timeout_functions(
            connection,
            { timeout, data in
                guard let timeout, let core = BusCore.from(data) else { return 0 }
                core.timeoutChanged(timeout)
                return 1
            },
            { timeout, data in
                guard let timeout, let core = BusCore.from(data) else { return }
                core.timeoutDeadlines[timeout] = nil
            },
            { timeout, data in
                guard let timeout, let core = BusCore.from(data) else { return }
                core.timeoutChanged(timeout)
            },
            retainedSelf(), release)
        guard watchesOK != 0, timeoutsOK != 0 else { throw .outOfMemory }
        // dbus_connection_set_wakeup_main_function / set_dispatch_status_function
        dbus_connection_set_wakeup_main_function(
            connection, { data in BusCore.from(data)?.wake() }, retainedSelf(), release)
        dbus_connection_set_dispatch_status_function(
            connection, { _, _, data in BusCore.from(data)?.wake() }, retainedSelf(), release)
        // dbus_connection_add_filter: signals (including the local Disconnected signal).
        let filterOK = dbus_connection_add_filter(
            connection,
            { _, message, data in
                guard let message, let core = BusCore.from(data) else { return DBUS_HANDLER_RESULT_NOT_YET_HANDLED }
                core.filter(message)
                return DBUS_HANDLER_RESULT_NOT_YET_HANDLED
            },
            retainedSelf(), release)
        guard filterOK != 0 else { throw .outOfMemory }
    }

    /// A timeout was added or toggled: (re)arm it from now, or forget it while disabled.
    func timeoutChanged(_ timeout: OpaquePointer) {
        if dbus_timeout_get_enabled(timeout) != 0 {
            timeoutDeadlines[timeout] = .now + .milliseconds(Int(dbus_timeout_get_interval(timeout)))
        } else {
            timeoutDeadlines[timeout] = nil
        }
    }

    /// Starts the bus thread (`pthread_create`, detached); it runs until ``requestStop()``.
    func startThread() throws(DBusConnectionError) {
        var thread = pthread_t()
        let box = Unmanaged.passRetained(self).toOpaque()
        let result = pthread_create(
            &thread, nil,
            { arg in
                guard let arg else { return nil }
                let core = Unmanaged<BusCore>.fromOpaque(arg).takeRetainedValue()
                core.run()
                return nil
            }, box)
        guard result == 0 else {
            Unmanaged<BusCore>.fromOpaque(box).release()
            throw .threadStartFailed(result)
        }
        pthread_detach(thread)
    }
}
