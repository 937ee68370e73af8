import RigDBus

/// A local Bluetooth adapter (`org.bluez.Adapter1` at `/org/bluez/hciN`), as a central uses it.
public struct BlueZAdapter: Sendable {
    public let bus: DBusConnection
    /// `hci0`, …
    public let name: String
    /// `/org/bluez/hci0`, …
    public var path: String { "/org/bluez/" + name }

    static let interface = "org.bluez.Adapter1"

    /// The adapter called `name`, checked to exist and be powered.
    public static func named(_ name: String, on bus: DBusConnection) async throws -> BlueZAdapter {
        let objects: DBusManagedObjects
        do {
            objects = try await bus.managedObjects(destination: BlueZ.service, timeout: .seconds(10))
        } catch let error as DBusError {
            throw BlueZCentralError.bluez(operation: "GetManagedObjects", message: "\(error) (is bluetoothd running?)")
        }
        let adapters = objects.objects.filter { $0.value[interface] != nil }
        guard let properties = adapters["/org/bluez/" + name]?[interface] else {
            let available = adapters.keys.compactMap { $0.split(separator: "/").last.map(String.init) }.sorted()
            throw BlueZCentralError.noAdapter(name: name, available: available)
        }
        guard properties["Powered"]?.bool == true else { throw BlueZCentralError.adapterOff(name: name) }
        return BlueZAdapter(bus: bus, name: name)
    }

    /// `Adapter1.SetDiscoveryFilter({Transport: "le", UUIDs: [uuid]})`: a hint to the
    /// controller; callers still filter what they see (``BlueZDeviceFilter``).
    public func setDiscoveryFilter(serviceUUID: String) async throws {
        try await call(
            "SetDiscoveryFilter",
            [
                .vardict([
                    "Transport": .string("le"),
                    "UUIDs": .strings([BlueZUUID.normalized(serviceUUID)]),
                ])
            ])
    }

    /// `Adapter1.StartDiscovery`. BlueZ keeps discovering while any client asked for it.
    public func startDiscovery() async throws {
        do { try await call("StartDiscovery") } catch let error as BlueZCentralError {
            // Already discovering (another client, or an earlier call of ours): fine.
            if case .bluez(_, let message) = error, message.contains("InProgress") { return }
            throw error
        }
    }

    /// `Adapter1.StopDiscovery`; errors (not discovering) are ignored.
    public func stopDiscovery() async {
        try? await call("StopDiscovery")
    }

    /// Sets one of the adapter's properties (`Properties.Set` on `Adapter1`): `Pairable`,
    /// `Discoverable`, their timeouts, ….
    public func set(_ property: String, _ value: DBusValue) async throws {
        try await BlueZ.setProperty(on: bus, path: path, interface: Self.interface, property, value)
    }

    /// `Adapter1.RemoveDevice`: forgets the device and its bond (disconnecting it).
    public func removeDevice(_ devicePath: String) async throws {
        try await call("RemoveDevice", [.objectPath(devicePath)])
    }

    private func call(_ method: String, _ args: [DBusValue] = []) async throws {
        do {
            _ = try await bus.call(
                destination: BlueZ.service, path: path, interface: Self.interface, method: method,
                args: args, timeout: .seconds(10))
        } catch let error as DBusError {
            throw BlueZCentralError.bluez(operation: "\(method) on \(name)", message: error.description)
        }
    }
}

/// Names shared by the BlueZ wrappers.
public enum BlueZ {
    /// bluetoothd's bus name.
    public static let service = "org.bluez"
    static let device = "org.bluez.Device1"
    static let characteristic = "org.bluez.GattCharacteristic1"
    static let properties = "org.freedesktop.DBus.Properties"

    /// `Properties.Set(interface, property, value)` on a BlueZ object.
    static func setProperty(
        on bus: DBusConnection, path: String, interface: String, _ property: String, _ value: DBusValue
    ) async throws {
        do {
            _ = try await bus.call(
                destination: service, path: path, interface: properties, method: "Set",
                args: [.string(interface), .string(property), .variant(value)], timeout: .seconds(10))
        } catch let error as DBusError {
            throw BlueZCentralError.bluez(operation: "setting \(property) on \(path)", message: error.description)
        }
    }
}
