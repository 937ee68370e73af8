import Foundation
import Logging
import RigBluetooth
import RigCore
import RigDBus
import RigFormat
import RigTestSupport
import Synchronization
import Testing

@testable import RigStepSync

/// Writes to the Cascable characteristics only from phones `rig pair` put on the
/// paired-phones list (docs/cascable.md, Pairing). On bluezoo, which does not enforce the
/// `encrypt-authenticated-write` flag (real bluetoothd does: the qemu tier's `bui-pair`),
/// so what is tested here is rig's own check of the writer.
@Suite(.serialized) struct PairingTests {
    static let centralAddress = "00:00:00:22:22:22"

    /// A central on bluezoo's hci1 connected to a BUIPeripheral on hci0, and Continue
    /// Available to write to.
    static func connect(_ control: DBusConnection) async throws -> BlueZCharacteristic {
        let adapter = try await BlueZAdapter.named("hci1", on: control)
        let found = try await BlueZCentral(bus: control).discover(
            on: adapter, filter: BlueZDeviceFilter(serviceUUID: BUIService.service), timeout: .seconds(90))
        let device = BlueZDevice(bus: control, path: found.path)
        try await device.connect(timeout: .seconds(90))
        let characteristic = try #require(try await device.characteristic(uuid: BUIService.continueAvailable))
        return characteristic
    }

    @Test func theWritableCharacteristicsAskForAnAuthenticatedLink() {
        let paired = BUIPeripheral.characteristics(
            config: StepSyncConfig(), pairedPhones: nil, state: StateBox(), logger: Logger(label: "test"),
            onInput: { _ in }, onMessage: { _ in })
        for index in [BUIService.Index.userMessage, BUIService.Index.continueAvailable, BUIService.Index.stopAvailable] {
            #expect(paired[index].flags.contains("encrypt-authenticated-write"))
            #expect(!paired[index].flags.contains("write"))
        }
        var open = StepSyncConfig()
        open.requirePairing = false
        let anyone = BUIPeripheral.characteristics(
            config: open, pairedPhones: nil, state: StateBox(), logger: Logger(label: "test"),
            onInput: { _ in }, onMessage: { _ in })
        #expect(anyone[BUIService.Index.continueAvailable].flags == ["write", "write-without-response"])
    }

    @Test func aWriteFromAPhoneNotOnTheListIsRefusedAndAPairedOneIsTaken() async throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let control = try await CascableFlowTests.startBluezoo(bus)
        defer { control.close() }
        let dir = try TestTools.temporaryDirectory()
        let phones = PairedPhones(directory: dir.path)
        // Somebody else's phone is paired; the central on hci1 is not.
        try phones.add(PairedPhones.Phone(address: "AA:BB:CC:DD:EE:FF", adapter: "hci0", name: "other"))

        let connection = try DBusConnection(bus: .address(bus.address))
        defer { connection.close() }
        let inputs = Mutex<[BUICycle.Input]>([])
        let peripheral = BUIPeripheral(
            connection: connection, config: StepSyncConfig(), pairedPhones: phones, logger: Logger(label: "test"),
            onInput: { input in inputs.withLock { $0.append(input) } }, onMessage: { _ in })
        try await peripheral.start()
        defer { peripheral.stop() }
        let continueAvailable = try await Self.connect(control)

        await #expect(throws: (any Error).self) { try await continueAvailable.write([1], type: .request) }
        #expect(inputs.withLock { $0 }.isEmpty, "a refused write reached the cycle")
        #expect(peripheral.current.continueAvailable == false)

        // `rig pair` adds the central while the rig runs: its next write is taken.
        try phones.add(PairedPhones.Phone(address: Self.centralAddress, adapter: "hci0"))
        try await continueAvailable.write([1], type: .request)
        #expect(inputs.withLock { $0 } == [.continueAvailable(true)])
        #expect(peripheral.current.continueAvailable == true)

        // Removed again (`rig pair --remove`): refused again, nothing changes.
        #expect(try phones.remove(address: Self.centralAddress)?.address == Self.centralAddress)
        await #expect(throws: (any Error).self) { try await continueAvailable.write([0], type: .request) }
        #expect(inputs.withLock { $0 } == [.continueAvailable(true)])
        #expect(peripheral.current.continueAvailable == true)
    }

    @Test func theRefusalIsNotAuthorizedAndNamesTheWriter() throws {
        let dir = try TestTools.temporaryDirectory()
        let phones = PairedPhones(directory: dir.path)
        #expect(throws: GattWriteRefusal.notAuthorized("no phone paired: run `rig pair`")) {
            try BUIPeripheral.admit(device: "/org/bluez/hci0/dev_00_00_00_22_22_22", pairedPhones: phones)
        }
        try phones.add(PairedPhones.Phone(address: "AA:BB:CC:DD:EE:FF", adapter: "hci0", seenAs: ["7A:11:22:33:44:55"]))
        #expect(throws: GattWriteRefusal.notAuthorized("00:00:00:22:22:22 is not a paired phone (`rig pair --list`)")) {
            try BUIPeripheral.admit(device: "/org/bluez/hci0/dev_00_00_00_22_22_22", pairedPhones: phones)
        }
        #expect(throws: GattWriteRefusal.self) { try BUIPeripheral.admit(device: nil, pairedPhones: phones) }
        #expect(throws: GattWriteRefusal.self) { try BUIPeripheral.admit(device: "/org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF", pairedPhones: nil) }
        // The identity address and the address BlueZ first showed the phone under.
        try BUIPeripheral.admit(device: "/org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF", pairedPhones: phones)
        try BUIPeripheral.admit(device: "/org/bluez/hci0/dev_7A_11_22_33_44_55", pairedPhones: phones)
        #expect(GattWriteRefusal.notAuthorized("x").dbusErrorName == "org.bluez.Error.NotAuthorized")
    }

    @Test func theListSurvivesARestart() throws {
        let dir = try TestTools.temporaryDirectory().appendingPathComponent("state/rig")
        let first = PairedPhones(directory: dir.path)
        #expect(try first.load().isEmpty)
        try first.add(PairedPhones.Phone(address: "aa:bb:cc:dd:ee:ff", adapter: "hci1", name: "Jo's \"phone\""))
        try first.add(PairedPhones.Phone(address: "11:22:33:44:55:66", adapter: "hci0"))
        // Another process (the rig after a reboot) reads what `rig pair` saved.
        let again = PairedPhones(directory: dir.path)
        #expect(
            try again.load() == [
                PairedPhones.Phone(address: "AA:BB:CC:DD:EE:FF", adapter: "hci1", name: "Jo's \"phone\""),
                PairedPhones.Phone(address: "11:22:33:44:55:66", adapter: "hci0"),
            ])
        #expect(try again.remove(address: "AA:BB:CC:DD:EE:FF")?.name == "Jo's \"phone\"")
        #expect(try PairedPhones(directory: dir.path).load().map(\.address) == ["11:22:33:44:55:66"])
    }

    @Test(arguments: [
        ("{ \"phones\": [ { \"address\": \"not an address\" } ] }", "not a Bluetooth address"),
        ("{ \"phones\": [ ", "paired-phones.json:1:"),
        ("{ \"phone\": [] }", "phones"),
        ("{ \"phones\": [ { \"address\": \"AA:BB:CC:DD:EE:FF\", \"pin\": 1234 } ] }", "pin"),
    ])
    func aMalformedListIsAClearError(contents: String, mentions: String) async throws {
        let state = try TestTools.temporaryDirectory()
        let dir = state.appendingPathComponent("rig")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let phones = PairedPhones(directory: dir.path)
        try contents.write(toFile: phones.filePath, atomically: true, encoding: .utf8)
        let error = try #require(throws: FileError.self) { try phones.load() }
        #expect(error.description.contains(phones.filePath))
        #expect(error.description.contains(mentions), "\(error)")
        // Every write is refused while the list is broken.
        #expect(throws: GattWriteRefusal.self) {
            try BUIPeripheral.admit(device: "/org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF", pairedPhones: phones)
        }
        // The commands say so and exit 2.
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_STATE_HOME"] = state.path
        let list = try RigProcess.run(["pair", "--list"], environment: environment)
        #expect(list.status == 2)
        #expect(list.stderr.contains(phones.filePath), "\(list.stderr)")
    }

    @Test func pairListAndRemoveManageTheFile() throws {
        let state = try TestTools.temporaryDirectory()
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_STATE_HOME"] = state.path
        // No bluetoothd on this bus: removing still takes the phone off the list.
        environment["DBUS_SYSTEM_BUS_ADDRESS"] = "unix:path=\(state.path)/no-bus"
        let empty = try RigProcess.run(["pair", "--list"], environment: environment)
        #expect(empty.status == 0)
        #expect(empty.stdout.contains("no phone paired"))
        let phones = PairedPhones(directory: state.appendingPathComponent("rig").path)
        try phones.add(PairedPhones.Phone(address: "AA:BB:CC:DD:EE:FF", adapter: "hci0", name: "Pixel"))
        let listed = try RigProcess.run(["pair", "--list"], environment: environment)
        #expect(listed.stdout.contains("AA:BB:CC:DD:EE:FF  hci0  Pixel"), "\(listed.stdout)")
        let removed = try RigProcess.run(["pair", "--remove", "aa:bb:cc:dd:ee:ff"], environment: environment)
        #expect(removed.status == 0, "\(removed.stderr)")
        #expect(removed.stdout.contains("removed Pixel"))
        #expect(try phones.load().isEmpty)
        let again = try RigProcess.run(["pair", "--remove", "AA:BB:CC:DD:EE:FF"], environment: environment)
        #expect(again.status == 1)
        let bad = try RigProcess.run(["pair", "--remove", "nope"], environment: environment)
        #expect(bad.status == 2)
        let none = try RigProcess.run(["pair"], environment: environment)
        #expect(none.status == 2)
    }

    /// Rig files of earlier versions keep working: `encryptWrites` is `requirePairing` by its
    /// old name, `allowedCentrals` are admitted besides the paired phones.
    @Test func theOldSecurityKeysStillMeanWhatTheySaid() throws {
        func config(_ stepSync: String) throws -> StepSyncConfig {
            let text =
                "{ \"name\": \"r\", \"output\": { \"type\": \"sim\" }, \"stepSync\": { \(stepSync) }, \"axes\": [ { \"name\": \"pan\", \"channel\": 0, \"maxVelocity\": 100, \"maxAcceleration\": 400 } ] }"
            return try StepSyncConfig.parse(try RigParser.parse(text: text, file: "rig.json").stepSync)
        }
        #expect(try config("\"encryptWrites\": false").requirePairing == false)
        #expect(try config("\"encryptWrites\": true").requirePairing)
        #expect(throws: FileError.self) { try config("\"encryptWrites\": true, \"requirePairing\": true") }
        let listed = try config("\"allowedCentrals\": [\"aa:bb:cc:dd:ee:01\"]")
        #expect(listed.requirePairing && listed.allowedCentrals == ["AA:BB:CC:DD:EE:01"] || listed.allowedCentrals == ["aa:bb:cc:dd:ee:01"])
        // Admitted by the rig file's list with no paired phone at all; any other central is not.
        try BUIPeripheral.admit(device: "/org/bluez/hci0/dev_AA_BB_CC_DD_EE_01", pairedPhones: nil, alsoAllowed: listed.allowedCentrals)
        #expect(throws: GattWriteRefusal.self) {
            try BUIPeripheral.admit(device: "/org/bluez/hci0/dev_AA_BB_CC_DD_EE_02", pairedPhones: nil, alsoAllowed: listed.allowedCentrals)
        }
        let open = try RigParser.parse(
            text:
                "{ \"name\": \"r\", \"output\": { \"type\": \"sim\" }, \"stepSync\": { \"requirePairing\": false }, \"axes\": [ { \"name\": \"pan\", \"channel\": 0, \"maxVelocity\": 100, \"maxAcceleration\": 400 } ] }",
            file: "rig.json")
        #expect(try StepSyncConfig.parse(open.stepSync).requirePairing == false)
        #expect(StepSyncConfig().requirePairing)
    }
}
