import RigDBus

/// What BlueZ knows about a remote device (`org.bluez.Device1` properties).
public struct BlueZDeviceInfo: Sendable, Equatable {
    /// The object path, such as `/org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF`.
    public var path: String
    /// `AA:BB:CC:DD:EE:FF` (uppercase).
    public var address: String
    public var name: String?
    /// Advertised or resolved service UUIDs, normalized (``BlueZUUID/normalized(_:)``).
    public var uuids: [String]
    public var rssi: Int?
    public var connected: Bool
    public var servicesResolved: Bool

    public init(
        path: String, address: String, name: String? = nil, uuids: [String] = [], rssi: Int? = nil,
        connected: Bool = false, servicesResolved: Bool = false
    ) {
        self.path = path
        self.address = address
        self.name = name
        self.uuids = uuids
        self.rssi = rssi
        self.connected = connected
        self.servicesResolved = servicesResolved
    }

    /// Reads the `Device1` properties; nil if `properties` lacks an address.
    public init?(path: String, properties: [String: DBusValue]) {
        guard let address = properties["Address"]?.string else { return nil }
        self.init(path: path, address: address.uppercased())
        update(properties)
    }

    /// Applies changed properties (from `PropertiesChanged`).
    public mutating func update(_ properties: [String: DBusValue]) {
        if let name = properties["Name"]?.string ?? properties["Alias"]?.string { self.name = name }
        if let uuids = properties["UUIDs"]?.strings { self.uuids = uuids.map(BlueZUUID.normalized) }
        if let rssi = properties["RSSI"]?.int16 { self.rssi = Int(rssi) }
        if let connected = properties["Connected"]?.bool { self.connected = connected }
        if let resolved = properties["ServicesResolved"]?.bool { servicesResolved = resolved }
    }

    /// A short description for messages: `"BLEControl" (AA:BB:…)`.
    public var label: String {
        if let name { "\"\(name)\" (\(address))" } else { address }
    }
}
