import RigDBus

/// A BLE advertisement registered with `LEAdvertisingManager1`: a peripheral advertising
/// one 128-bit service UUID and a short local name.
public struct LEAdvertisement: Sendable {
    public var path: String
    public var serviceUUID: String
    public var localName: String

    /// Legacy advertising data is 31 bytes: flags (3) + a 128-bit UUID list (18) leave 10,
    /// of which the name's header takes 2.
    public static let maxLocalNameBytes = 8

    public init(path: String = "/org/rig/advertisement0", serviceUUID: String, localName: String) {
        self.path = path
        self.serviceUUID = serviceUUID.lowercased()
        self.localName = Self.fit(localName)
    }

    /// `name` cut to the advertisement's room, on a character boundary.
    public static func fit(_ name: String) -> String {
        var result = ""
        for character in name {
            if result.utf8.count + String(character).utf8.count > maxLocalNameBytes { break }
            result.append(character)
        }
        return result.isEmpty ? "rig" : result
    }

    public func export(on connection: DBusConnection) async throws {
        try await connection.export(
            DBusObject(
                path: path,
                interfaces: [
                    DBusInterface(
                        "org.bluez.LEAdvertisement1",
                        methods: [
                            "Release": DBusMethod { _ in [] }
                        ],
                        properties: [
                            "Type": .constant(.string("peripheral")),
                            "ServiceUUIDs": .constant(.strings([serviceUUID])),
                            "LocalName": .constant(.string(localName)),
                            "Discoverable": .constant(.boolean(true)),
                        ])
                ]))
    }

    public func register(on connection: DBusConnection, adapter: String) async throws {
        _ = try await connection.call(
            destination: "org.bluez", path: adapter, interface: "org.bluez.LEAdvertisingManager1",
            method: "RegisterAdvertisement", args: [.objectPath(path), .vardict([:])],
            expecting: "", timeout: .seconds(10))
    }
}
