import ArgumentParser
import FoundationEssentials
import Glibc
import RigBLEControl
import RigBluetooth
import RigDBus
import Synchronization

struct ScanCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scan",
        abstract: "List nearby BLEControl boards (BLE devices advertising service FFE0).",
        discussion:
            "Uses BlueZ over the system D-Bus (DBUS_SYSTEM_BUS_ADDRESS is honoured). Put the address in the rig file's output as \"address\" to pin a board."
    )

    @Option(help: ArgumentHelp("The Bluetooth adapter to scan with.", valueName: "hciN"))
    var adapter = "hci0"

    @Option(help: "How long to scan, in seconds.")
    var seconds: Double = 5

    func validate() throws {
        guard seconds > 0, seconds <= 120 else { throw ValidationError("--seconds must be in 0 < X ≤ 120") }
        guard adapter.hasPrefix("hci"), Int(adapter.dropFirst(3)) != nil else {
            throw ValidationError("--adapter \(adapter): valid: hci0, hci1, …")
        }
    }

    func run() throws {
        // The root command is synchronous: run the D-Bus work on a task and wait for it.
        let adapter = self.adapter
        let seconds = self.seconds
        try runBlocking { try await Self.scan(adapter: adapter, seconds: seconds) }
    }

    private static func scan(adapter: String, seconds: Double) async throws {
        do {
            let bus = try DBusConnection(bus: .system)
            defer { bus.close() }
            let central = BlueZCentral(bus: bus)
            let chosen = try await BlueZAdapter.named(adapter, on: bus)
            let boards = try await central.scan(
                on: chosen, filter: BlueZDeviceFilter(serviceUUID: BLEControlProfile.service.uuid),
                duration: .milliseconds(Int(seconds * 1000)))
            if boards.isEmpty {
                say("no BLEControl board seen on \(adapter) in \(seconds) s (is it powered, and not connected to a phone?)")
                return
            }
            for board in boards {
                let rssi = board.rssi.map { " RSSI \($0) dBm" } ?? ""
                say("\(board.address)  \(board.name ?? "(no name)")\(rssi)\(board.connected ? "  connected" : "")")
            }
        } catch {
            printError("error: \(error)")
            throw ExitCode(1)
        }
    }
}
