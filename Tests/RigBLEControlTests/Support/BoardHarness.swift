import Foundation
import RigDBus
import RigTestSupport

/// A private bus, bluezoo with two adapters, and the Python test board
/// (`fake_blecontrol_board.py`) registered on the second one.
final class BoardHarness: @unchecked Sendable {
    static let centralAdapter = "hci0"
    static let boardAddress = "00:00:00:22:22:22"

    let bus: PrivateBus
    let connection: DBusConnection
    let logPath: String
    let stateDirectory: String
    private var board: ChildProcess?
    private var emulator: ChildProcess?
    private let boardArguments: [String]

    struct Entry: Decodable {
        var event: String
        var t: Double
        var via: String?
        var cmd: Int?
        var name: String?
        var channel: Int?
        var value: Int?
        var enable: Int?
        var bytes: [Int]?
        var what: String?
    }

    init(boardArguments: [String] = []) async throws {
        trace("harness: starting")
        self.boardArguments = boardArguments
        bus = try PrivateBus()
        connection = try DBusConnection(bus: .address(bus.address))
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("rig-ble-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        logPath = directory.appendingPathComponent("board.jsonl").path
        stateDirectory = directory.appendingPathComponent("state").path
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        try await startEmulatorAndBoard()
        trace("harness: board ready")
    }

    /// bluezoo (a 1 s scan interval: it scans every 10 s by default), then the board.
    private func startEmulatorAndBoard() async throws {
        emulator = try bus.launch("bluezoo", ["--auto-enable", "--scan-interval", "1", "-a", "00:00:00:11:11:11", "-a", Self.boardAddress])
        let connection = self.connection
        _ = try await poll(for: .seconds(120)) { try await connection.nameHasOwner("org.bluez") ? true : nil }
        _ = try await poll(for: .seconds(120)) { () -> Bool? in
            let managed = try? await connection.managedObjects(destination: "org.bluez", path: "/")
            let powered = managed?.objects.values.filter { $0["org.bluez.Adapter1"]?["Powered"] == .boolean(true) }
            return (powered?.count ?? 0) >= 2 ? true : nil
        }
        let script = TestTools.packageRoot.appendingPathComponent("Tests/RigBLEControlTests/fake_blecontrol_board.py").path
        let readyBefore = entries().filter { $0.event == "ready" }.count
        board = try bus.launch("python3", [script, "--adapter", "hci1", "--log", logPath] + boardArguments)
        _ = try await poll(for: .seconds(120)) { [self] in entries().filter { $0.event == "ready" }.count > readyBefore ? true : nil }
    }

    /// The board and the radio go away and come back (power-cycled board, a fresh emulator:
    /// bluezoo cannot reconnect a device pair it once disconnected).
    func restartEmulatorAndBoard() async throws {
        for process in [board, emulator].compactMap({ $0 }) { process.killAndWait() }
        let connection = self.connection
        _ = try await poll(for: .seconds(120)) { try await connection.nameHasOwner("org.bluez") ? nil : true }
        try await startEmulatorAndBoard()
    }

    deinit {
        stop()
    }

    func stop() {
        trace("harness: stopping")
        // SIGKILL: a child spawned from the test process may inherit a blocked SIGTERM.
        board?.killAndWait()
        connection.close()
        bus.stop()
    }

    /// Everything the board logged so far.
    func entries() -> [Entry] {
        guard let text = try? String(contentsOfFile: logPath, encoding: .utf8) else { return [] }
        let decoder = JSONDecoder()
        return text.split(separator: "\n").compactMap { try? decoder.decode(Entry.self, from: Data($0.utf8)) }
    }

    func commands() -> [Entry] { entries().filter { $0.event == "command" } }
    func violations() -> [String] { entries().filter { $0.event == "violation" }.compactMap(\.what) }

}

/// Progress on stderr (unbuffered), to see where a slow test is.
func trace(_ text: String) {
    FileHandle.standardError.write(Data((text + "\n").utf8))
}
