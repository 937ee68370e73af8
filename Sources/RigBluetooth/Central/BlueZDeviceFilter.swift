/// Which devices a scan accepts: a service UUID that must be advertised, and optionally a
/// pinned address or name.
///
/// BlueZ's `SetDiscoveryFilter` is only a hint (the emulator ignores it, and BlueZ still
/// reports devices it already knew), so every candidate is checked here as well.
public struct BlueZDeviceFilter: Sendable, Equatable, CustomStringConvertible {
    /// Required service UUID (any form; compared normalized).
    public var serviceUUID: String
    /// `AA:BB:CC:DD:EE:FF`, compared case-insensitively.
    public var address: String?
    /// Exact advertised name.
    public var name: String?

    public init(serviceUUID: String, address: String? = nil, name: String? = nil) {
        self.serviceUUID = serviceUUID
        self.address = address
        self.name = name
    }

    public func accepts(_ device: BlueZDeviceInfo) -> Bool {
        let wanted = BlueZUUID.normalized(serviceUUID)
        guard device.uuids.contains(wanted) else { return false }
        if let address, address.uppercased() != device.address { return false }
        if let name, device.name != name { return false }
        return true
    }

    public var description: String {
        var parts = ["service \(serviceUUID)"]
        if let address { parts.append("address \(address)") }
        if let name { parts.append("name \"\(name)\"") }
        return parts.joined(separator: ", ")
    }
}
