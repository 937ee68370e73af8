import RigDBus

/// A remote device (`org.bluez.Device1`) a central connects to.
public struct BlueZDevice: Sendable {
    public let bus: DBusConnection
    /// `/org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF`.
    public let path: String

    public init(bus: DBusConnection, path: String) {
        self.bus = bus
        self.path = path
    }

    /// The device's `Device1` properties (`Properties.GetAll`).
    public func properties() async throws -> [String: DBusValue] {
        do {
            let reply = try await bus.call(
                destination: BlueZ.service, path: path, interface: BlueZ.properties,
                method: "GetAll", args: [.string(BlueZ.device)], expecting: "a{sv}",
                timeout: .seconds(10))
            return reply[0].vardict ?? [:]
        } catch let error as DBusError {
            throw BlueZCentralError.bluez(operation: "reading \(path)", message: error.description)
        }
    }

    /// Sets one of the device's properties (`Trusted`, …).
    public func set(_ property: String, _ value: DBusValue) async throws {
        try await BlueZ.setProperty(on: bus, path: path, interface: BlueZ.device, property, value)
    }

    /// `PropertiesChanged` of this device's `Device1` interface, as changed-property maps.
    /// Subscribe before acting (connecting) so no change is missed.
    public func propertyChanges() async throws -> AsyncStream<[String: DBusValue]> {
        let signals = try await bus.signals(
            matching: .propertiesChanged(
                sender: BlueZ.service, path: path,
                interface: BlueZ.device))
        return AsyncStream { continuation in
            let task = Task {
                for await signal in signals {
                    if let change = try? DBusPropertiesChanged(signal) { continuation.yield(change.changed) }
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// `Device1.Connect`, then waits until BlueZ reports `ServicesResolved`: only then are
    /// the GATT objects below the device complete. Throws
    /// ``BlueZCentralError/connectTimedOut(device:seconds:)`` after `timeout` in all.
    public func connect(timeout: Duration) async throws {
        let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
        let changes = try await propertyChanges()
        let path = self.path
        do {
            try await withTimeout(timeout, error: BlueZCentralError.connectTimedOut(device: path, seconds: seconds)) {
                do {
                    _ = try await bus.call(
                        destination: BlueZ.service, path: path, interface: BlueZ.device,
                        method: "Connect", timeout: timeout)
                } catch let error as DBusError where error.isTimeout {
                    throw BlueZCentralError.connectTimedOut(device: path, seconds: seconds)
                } catch let error as DBusError {
                    // "AlreadyConnected" and "InProgress" still lead to a usable connection.
                    guard error.name.hasSuffix("AlreadyConnected") || error.name.hasSuffix("InProgress") else {
                        throw BlueZCentralError.bluez(operation: "Connect \(path)", message: error.description)
                    }
                }
                let now = try await properties()
                if now["Connected"]?.bool == true, now["ServicesResolved"]?.bool == true { return }
                for await change in changes {
                    if change["Connected"]?.bool == false { throw BlueZCentralError.disconnected(device: path) }
                    if change["ServicesResolved"]?.bool == true { return }
                }
                throw BlueZCentralError.disconnected(device: path)
            }
        } catch {
            // Leave no half-open connection behind.
            if error is BlueZCentralError { await disconnect() }
            throw error
        }
    }

    /// `Device1.Disconnect`; errors (already gone) are ignored.
    public func disconnect() async {
        _ = try? await bus.call(
            destination: BlueZ.service, path: path, interface: BlueZ.device, method: "Disconnect",
            timeout: .seconds(5))
    }

    /// The characteristic with `uuid` below this device (from `GetManagedObjects`), if any.
    public func characteristic(uuid: String) async throws -> BlueZCharacteristic? {
        let objects: DBusManagedObjects
        do {
            objects = try await bus.managedObjects(destination: BlueZ.service, timeout: .seconds(10))
        } catch let error as DBusError {
            throw BlueZCentralError.bluez(operation: "GetManagedObjects", message: error.description)
        }
        let wanted = BlueZUUID.normalized(uuid)
        for (objectPath, interfaces) in objects.objects.sorted(by: { $0.key < $1.key })
        where objectPath.hasPrefix(path + "/") {
            guard let properties = interfaces[BlueZ.characteristic],
                let found = properties["UUID"]?.string, BlueZUUID.normalized(found) == wanted
            else { continue }
            return BlueZCharacteristic(bus: bus, path: objectPath, uuid: wanted, flags: properties["Flags"]?.strings ?? [])
        }
        return nil
    }

    /// The object path BlueZ gives the device with `address` on `adapter`.
    public static func path(adapter: String, address: String) -> String {
        "/org/bluez/\(adapter)/dev_" + String(address.uppercased().map { $0 == ":" ? "_" : $0 })
    }

    /// The address in a device object path (`…/dev_AA_BB_…`), if it has one.
    public static func address(fromPath path: String) -> String? {
        guard let last = path.split(separator: "/").last, last.hasPrefix("dev_") else { return nil }
        let address = String(last.dropFirst(4).map { $0 == "_" ? ":" : $0 })
        return address.count == 17 ? address.uppercased() : nil
    }
}

/// Runs `body`, throwing `error` if it has not finished within `timeout`.
func withTimeout<T: Sendable>(
    _ timeout: Duration, error: any Error & Sendable,
    _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: timeout)
            return nil
        }
        defer { group.cancelAll() }
        guard let first = try await group.next(), let value = first else { throw error }
        return value
    }
}
