import RigDBus

/// The central side of BlueZ over D-Bus: finds devices offering a service on an adapter.
///
/// Discovery subscribes to `InterfacesAdded` and device `PropertiesChanged` *before* it
/// reads `GetManagedObjects` (BlueZ, and the bluezoo emulator even more so, announce a
/// device once), sets a discovery filter for the service (a hint only) and filters every
/// device itself with ``BlueZDeviceFilter``.
///
/// ```swift
/// let central = BlueZCentral(bus: try DBusConnection(bus: .system))
/// let adapter = try await BlueZAdapter.named("hci0", on: central.bus)
/// let board = try await central.discover(on: adapter, filter: BlueZDeviceFilter(serviceUUID: "FFE0"),
///                                        timeout: .seconds(10))
/// let device = BlueZDevice(bus: central.bus, path: board.path)
/// try await device.connect(timeout: .seconds(10))
/// ```
public struct BlueZCentral: Sendable {
    public let bus: DBusConnection

    public init(bus: DBusConnection) {
        self.bus = bus
    }

    /// Scans until a device passing `filter` is seen, and returns it. With `preferred`
    /// (an address), a matching device with that address wins when it shows up within
    /// `preferWindow` of the first match. Discovery is stopped before returning.
    public func discover(
        on adapter: BlueZAdapter, filter: BlueZDeviceFilter, timeout: Duration,
        preferred: String? = nil, preferWindow: Duration = .seconds(2)
    ) async throws -> BlueZDeviceInfo {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        var firstMatch: (device: BlueZDeviceInfo, at: ContinuousClock.Instant)?
        let result: BlueZDeviceInfo? = try await scanEvents(on: adapter, filter: filter, until: deadline) { device in
            if preferred == nil || device.address == preferred?.uppercased() { return .stop(device) }
            if firstMatch == nil { firstMatch = (device, clock.now) }
            return .continue
        } tick: {
            if let firstMatch, clock.now >= firstMatch.at + preferWindow { return firstMatch.device }
            return nil
        }
        if let result { return result }
        if let firstMatch { return firstMatch.device }
        let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
        throw BlueZCentralError.notFound(adapter: adapter.name, filter: filter.description, seconds: seconds)
    }

    /// Every device passing `filter` seen within `duration`, by address (the latest
    /// properties of each).
    public func scan(on adapter: BlueZAdapter, filter: BlueZDeviceFilter, duration: Duration) async throws -> [BlueZDeviceInfo] {
        var found: [String: BlueZDeviceInfo] = [:]
        _ = try await scanEvents(on: adapter, filter: filter, until: ContinuousClock().now + duration) { device in
            found[device.address] = device
            return .continue
        } tick: {
            nil
        }
        return found.values.sorted { $0.address < $1.address }
    }

    enum Verdict {
        case stop(BlueZDeviceInfo)
        case `continue`
    }

    private enum Event: Sendable {
        case added(path: String, properties: [String: DBusValue])
        case changed(path: String, properties: [String: DBusValue])
        case tick
    }

    /// Runs discovery until `onMatch` stops it, `tick` (called every 100 ms) returns a
    /// device, or the deadline passes (nil).
    private func scanEvents(
        on adapter: BlueZAdapter, filter: BlueZDeviceFilter, until deadline: ContinuousClock.Instant,
        onMatch: (BlueZDeviceInfo) -> Verdict, tick: () -> BlueZDeviceInfo?
    ) async throws -> BlueZDeviceInfo? {
        let added = try await bus.signals(matching: .interfacesAdded(sender: BlueZ.service))
        let changed = try await bus.signals(
            matching: .propertiesChanged(
                sender: BlueZ.service, pathNamespace: adapter.path,
                interface: BlueZ.device))
        let (events, continuation) = AsyncStream.makeStream(of: Event.self, bufferingPolicy: .unbounded)
        let devicePrefix = adapter.path + "/dev_"
        let feeders = [
            Task {
                for await signal in added {
                    guard let info = try? DBusInterfacesAdded(signal), info.path.hasPrefix(devicePrefix),
                        let properties = info.interfaces[BlueZ.device]
                    else { continue }
                    continuation.yield(.added(path: info.path, properties: properties))
                }
            },
            Task {
                for await signal in changed {
                    guard let change = try? DBusPropertiesChanged(signal), change.path.hasPrefix(devicePrefix) else { continue }
                    continuation.yield(.changed(path: change.path, properties: change.changed))
                }
            },
            Task {
                while !Task.isCancelled, ContinuousClock().now < deadline {
                    try? await Task.sleep(for: .milliseconds(100))
                    continuation.yield(.tick)
                }
                continuation.finish()
            },
        ]
        defer {
            for feeder in feeders { feeder.cancel() }
            continuation.finish()
        }

        var devices: [String: BlueZDeviceInfo] = [:]
        let objects: DBusManagedObjects
        do {
            objects = try await bus.managedObjects(destination: BlueZ.service, timeout: .seconds(10))
        } catch let error as DBusError {
            throw BlueZCentralError.bluez(operation: "GetManagedObjects", message: error.description)
        }
        for (path, interfaces) in objects.objects.sorted(by: { $0.key < $1.key }) where path.hasPrefix(devicePrefix) {
            guard let properties = interfaces[BlueZ.device], let device = BlueZDeviceInfo(path: path, properties: properties) else { continue }
            devices[path] = device
            if filter.accepts(device), case .stop(let chosen) = onMatch(device) { return chosen }
        }
        try? await adapter.setDiscoveryFilter(serviceUUID: filter.serviceUUID)
        try await adapter.startDiscovery()
        defer { Task { [adapter] in await adapter.stopDiscovery() } }

        for await event in events {
            let device: BlueZDeviceInfo?
            switch event {
            case .added(let path, let properties):
                device = BlueZDeviceInfo(path: path, properties: properties)
            case .changed(let path, let properties):
                if var known = devices[path] ?? BlueZDevice.address(fromPath: path).map({ BlueZDeviceInfo(path: path, address: $0) }) {
                    known.update(properties)
                    device = known
                } else {
                    device = nil
                }
            case .tick:
                if let chosen = tick() { return chosen }
                continue
            }
            guard let device else { continue }
            devices[device.path] = device
            if filter.accepts(device), case .stop(let chosen) = onMatch(device) { return chosen }
        }
        return nil
    }
}
