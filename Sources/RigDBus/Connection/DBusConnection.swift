import CDBus
import Logging

/// A private connection to a D-Bus bus, served by one dedicated thread.
///
/// The connection is owned by a bus thread running its own `poll()` loop over libdbus's
/// watches and timeouts; every libdbus call on the connection happens there, and the methods
/// below hand work to it (they never block the caller, and nothing blocks the bus thread, so
/// exported objects are served even while a call is pending: bluetoothd calls back
/// `GetManagedObjects` before it replies to `RegisterApplication`).
///
/// Errors: calls throw ``DBusError`` for error replies (including a timeout,
/// `org.freedesktop.DBus.Error.NoReply`), ``DBusMarshalError`` for invalid arguments or a reply
/// of the wrong type, and ``DBusConnectionError`` once the connection is closed or lost.
///
/// ```swift
/// let bus = try DBusConnection(bus: .system)            // honours DBUS_SYSTEM_BUS_ADDRESS
/// let added = try await bus.signals(matching: .interfacesAdded(sender: "org.bluez"))
/// let objects = try await bus.managedObjects(destination: "org.bluez")
/// try await bus.export(DBusObject(path: "/org/rig/app", interfaces: [], isObjectManager: true))
/// _ = try await bus.call(destination: "org.bluez", path: "/org/bluez/hci0",
///                        interface: "org.bluez.GattManager1", method: "RegisterApplication",
///                        args: [.objectPath("/org/rig/app"), .vardict([:])], expecting: "")
/// ```
public final class DBusConnection: Sendable {
    /// Which bus to connect to.
    public enum Bus: Sendable, Hashable {
        /// The system bus (`DBUS_SYSTEM_BUS_ADDRESS`, else the well-known socket).
        case system
        /// The session bus (`DBUS_SESSION_BUS_ADDRESS`).
        case session
        /// A bus daemon at an explicit address, such as `unix:path=/tmp/bus`.
        case address(String)
    }

    let core: BusCore
    /// This connection's unique name on the bus (`dbus_bus_get_unique_name`), such as `:1.7`.
    public let uniqueName: String

    /// Connects and registers with the bus (`dbus_bus_get_private`, or
    /// `dbus_connection_open_private` + `dbus_bus_register`), disables exit-on-disconnect
    /// (`dbus_connection_set_exit_on_disconnect`), then starts the bus thread.
    ///
    /// This blocks the caller until the bus answers `Hello`: create connections at start-up,
    /// not on a latency-sensitive path.
    public init(bus: Bus = .system, logger: Logger = Logger(label: "rig.dbus")) throws {
        var error = CDBus.DBusError()
        dbus_error_init(&error)
        defer { dbus_error_free(&error) }
        func failure() -> DBusConnectionError {
            let name = error.name.map { String(cString: $0) } ?? DBusError.failed
            let message = error.message.map { String(cString: $0) } ?? ""
            return .connectFailed(name: name, message: message)
        }
        let raw: OpaquePointer
        switch bus {
        case .system, .session:
            guard let connection = dbus_bus_get_private(bus == .system ? DBUS_BUS_SYSTEM : DBUS_BUS_SESSION, &error) else {
                throw failure()
            }
            raw = connection
        case .address(let address):
            guard !address.utf8.contains(0), let connection = dbus_connection_open_private(address, &error) else {
                throw failure()
            }
            guard dbus_bus_register(connection, &error) != 0 else {
                dbus_connection_close(connection)
                dbus_connection_unref(connection)
                throw failure()
            }
            raw = connection
        }
        dbus_connection_set_exit_on_disconnect(raw, 0)
        uniqueName = dbus_bus_get_unique_name(raw).map { String(cString: $0) } ?? ""
        do {
            core = try BusCore(connection: raw, logger: logger)
            try core.installCallbacks(on: raw)
            try core.startThread()
        } catch {
            dbus_connection_close(raw)
            dbus_connection_unref(raw)
            throw error
        }
    }

    deinit {
        core.requestStop()
    }

    /// Closes the connection (`dbus_connection_close`) on the bus thread and stops it.
    /// Pending calls fail with ``DBusConnectionError/closed``; signal streams finish.
    public func close() {
        core.requestStop()
    }

    // MARK: - Running work on the bus thread

    /// Runs `body` on the bus thread and returns its result; fails with `.closed` when the
    /// connection is gone.
    func perform<T: Sendable>(_ body: @escaping @Sendable (BusCore) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            let accepted = core.submit { core in
                guard core.connection != nil else {
                    continuation.resume(throwing: DBusConnectionError.closed)
                    return
                }
                continuation.resume(with: Result { try body(core) })
            }
            if !accepted { continuation.resume(throwing: DBusConnectionError.closed) }
        }
    }

    /// Starts a call on the bus thread; `start` must resume the continuation exactly once.
    func startCall(
        _ start: @escaping @Sendable (BusCore, CheckedContinuation<[DBusValue], any Error>) -> Void
    ) async throws -> [DBusValue] {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<[DBusValue], any Error>) in
            let accepted = core.submit { core in
                guard core.connection != nil else {
                    continuation.resume(throwing: DBusConnectionError.closed)
                    return
                }
                start(core, continuation)
            }
            if !accepted { continuation.resume(throwing: DBusConnectionError.closed) }
        }
    }

    static func milliseconds(_ timeout: Duration) -> Int32 {
        let (seconds, attoseconds) = timeout.components
        let ms = max(1, seconds * 1000 + attoseconds / 1_000_000_000_000_000)
        return Int32(clamping: min(ms, Int64(cdbus_timeout_infinite()) - 1))
    }
}
