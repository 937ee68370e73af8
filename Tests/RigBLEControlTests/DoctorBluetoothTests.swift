import Foundation
import RigTestSupport
import Testing

/// `rig doctor` (the real binary) against bluezoo on a private bus, with the test board
/// advertising: bluetoothd, the adapter and the board seen in a scan, then the broken cases
/// (no such adapter, a board that is not there, no bluetoothd at all).
@Suite(.serialized) struct DoctorBluetoothTests {
    func doctor(rig: String, bus: [String: String]) throws -> (status: Int32, text: String) {
        let directory = try TestTools.temporaryDirectory().path
        let path = directory + "/rig.json"
        try rig.write(toFile: path, atomically: true, encoding: .utf8)
        let process = TestProcess()
        process.executableURL = TestTools.rigExecutable
        process.arguments = ["doctor", "--rig", path, "--scan-seconds", "4"]
        var environment = bus
        environment["XDG_STATE_HOME"] = directory + "/state"
        environment["RIG_LOCK_DIR"] = directory + "/lock"
        process.environment = environment
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let text = PipeCollector(pipe).waitForEnd()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: text, as: UTF8.self))
    }

    static func rig(adapter: String, address: String) -> String {
        #"{"output": {"type": "blecontrol", "adapter": "\#(adapter)", "address": "\#(address)"}, "axes": [{"name": "pan", "channel": 0}]}"#
    }

    @Test func bluetoothAdapterAndBoardGoodAndBroken() async throws {
        let harness = try await BoardHarness()
        defer { harness.stop() }
        let environment = harness.bus.environment

        let good = try doctor(rig: Self.rig(adapter: BoardHarness.centralAdapter, address: BoardHarness.boardAddress), bus: environment)
        #expect(good.text.contains("ok       bluetooth: bluetoothd is running"), "\(good.text)")
        #expect(good.text.contains("ok       adapter: hci0 is powered"), "\(good.text)")
        #expect(good.text.contains("ok       blecontrol: board \(BoardHarness.boardAddress)"), "\(good.text)")
        #expect(!good.text.contains("problem  bluetooth") && !good.text.contains("problem  adapter") && !good.text.contains("problem  blecontrol"))

        let noAdapter = try doctor(rig: Self.rig(adapter: "hci7", address: BoardHarness.boardAddress), bus: environment)
        #expect(noAdapter.status == 1)
        #expect(noAdapter.text.contains("problem  adapter: no Bluetooth adapter hci7"), "\(noAdapter.text)")

        let noBoard = try doctor(rig: Self.rig(adapter: BoardHarness.centralAdapter, address: "00:00:00:99:99:99"), bus: environment)
        #expect(noBoard.status == 1)
        #expect(noBoard.text.contains("problem  blecontrol: no BLEControl board 00:00:00:99:99:99 seen on hci0"), "\(noBoard.text)")
    }

    @Test func noBluetoothdIsAProblem() async throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let result = try doctor(rig: Self.rig(adapter: "hci0", address: BoardHarness.boardAddress), bus: bus.environment)
        #expect(result.status == 1)
        #expect(result.text.contains("problem  bluetooth: bluetoothd is not running"), "\(result.text)")
    }
}
