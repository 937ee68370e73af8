import RigCore
import RigFormat

/// A BLEControl servo board reached over Bluetooth LE: the rig file's `"output"` section
/// when its type is `"blecontrol"`.
public struct BLEControlOutputConfig: Sendable, Equatable {
    public static let type = "blecontrol"

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

    /// Reads the rig's output section (its type is `blecontrol`) and checks the axes'
    /// channels against the board's 8.
    public static func parse(_ output: OutputConfig, axes: [Axis]) throws(FileError) -> BLEControlOutputConfig {
        let object = try output.object()
        var config = BLEControlOutputConfig()
        if let address = object.optional("address") { config.address = try address.bluetoothAddress() }
        if let name = object.optional("name") { config.name = try name.nonEmptyString() }
        if let adapter = object.optional("adapter") { config.adapter = try adapter.adapterName() }
        if let budget = object.optional("linkBytesPerSecond") {
            config.linkBytesPerSecond = try budget.number(in: 50...100_000, unit: "bytes/s")
        }
        if let write = object.optional("maxWriteBytes") { config.maxWriteBytes = try write.integer(in: 20...512) }
        if let timeout = object.optional("connectTimeoutSeconds") {
            config.connectTimeoutSeconds = try timeout.number(in: 1...600, unit: "s")
        }
        try object.finish()
        try output.checkChannels(of: axes, count: BLEControlCommand.channelCount)
        return config
    }
}

extension BLEControlOutputConfig {
    /// The board's smallest steps: SERVO_VAL is the pulse minus 1000 µs in whole µs,
    /// PWM_VAL a duty in per mille.
    public static let quantum = OutputQuantum(pulseMicroseconds: 1, dutyPercent: 100 / Double(BLEControlCommand.maxValue))
}
