/// A BLEControl servo board reached over Bluetooth LE.
public struct BLEControlOutputConfig: Sendable, Equatable {
    /// The board's Bluetooth address (`AA:BB:CC:DD:EE:FF`), if pinned.
    public var address: String?
    /// The board's advertised name, if pinned.
    public var name: String?
    public var adapter: String = "hci0"
    /// The byte budget of the link: the board's UART runs at 9600 baud.
    public var linkBytesPerSecond: Double = 960
    /// The largest single BLE write (ATT MTU 23 − 3).
    public var maxWriteBytes: Int = 20
    /// How long `start` waits for the first connection (scan, connect, INIT), and each
    /// reconnect attempt's scan and connect.
    public var connectTimeoutSeconds: Double = 30

    public init() {}

    static func parse(_ object: ObjectReader) throws(FileError) -> BLEControlOutputConfig {
        var config = BLEControlOutputConfig()
        if let address = object.optional("address") {
            let text = try address.string()
            guard isBluetoothAddress(text) else {
                throw address.error("\"\(elided(text))\" is not a Bluetooth address; write it like \"AA:BB:CC:DD:EE:FF\"")
            }
            config.address = text.uppercased()
        }
        if let name = object.optional("name") { config.name = try name.nonEmptyString() }
        if let adapter = object.optional("adapter") {
            let text = try adapter.string()
            guard text.hasPrefix("hci"), let number = Int(text.dropFirst(3)), number >= 0 else {
                throw adapter.error("\"\(elided(text))\" is not an adapter name; valid: \"hci0\", \"hci1\", …")
            }
            config.adapter = text
        }
        if let budget = object.optional("linkBytesPerSecond") {
            config.linkBytesPerSecond = try budget.number(in: 50...100_000, unit: "bytes/s")
        }
        if let write = object.optional("maxWriteBytes") { config.maxWriteBytes = try write.integer(in: 20...512) }
        if let timeout = object.optional("connectTimeoutSeconds") {
            config.connectTimeoutSeconds = try timeout.number(in: 1...600, unit: "s")
        }
        return config
    }
}

func isBluetoothAddress(_ text: String) -> Bool {
    let parts = text.split(separator: ":", omittingEmptySubsequences: false)
    return parts.count == 6 && parts.allSatisfy { $0.count == 2 && UInt8($0, radix: 16) != nil }
}
