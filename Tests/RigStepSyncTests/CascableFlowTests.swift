import Foundation
import Logging
import RigCore
import RigDBus
import RigTestSupport
import Testing

@testable import RigStepSync

/// Tier 2: the real `rig` binary as the Cascable accessory on bluezoo, and a
/// Cascable-simulating central (bleak) on the other adapter.
@Suite(.serialized) struct CascableFlowTests {
    static let program = """
        {
          "rig": {
            "name": "bui test",
            "output": { "type": "sim" },
            "stepSync": { "name": "rigtest", "pressMs": 100 },
            "axes": [
              { "name": "pan", "channel": 0, "maxVelocity": 200, "maxAcceleration": 800 },
              { "name": "tilt", "channel": 1, "maxVelocity": 200, "maxAcceleration": 800 }
            ]
          },
          "kind": "steps",
          "trigger": "bui",
          "settleSeconds": 0.1,
          "steps": [
            { "pose": { "pan": -20, "tilt": 0 } },
            { "pose": { "pan": 0, "tilt": 10 } },
            { "pose": { "pan": 20, "tilt": 0 } }
          ]
        }
        """

    struct Entry: Decodable {
        var event: String
        var t: Double
        var char: String?
        var value: AnyValue?
        var ok: Bool?
        var index: Int?
        var states: [Int]?
    }

    enum AnyValue: Decodable, Equatable {
        case int(Int)
        case string(String)
        init(from decoder: Decoder) throws {
            let c = try decoder.singleValueContainer()
            if let i = try? c.decode(Int.self) { self = .int(i) } else { self = .string(try c.decode(String.self)) }
        }
    }

    /// The environment for a `rig` whose state directory (under `dir`) lists `phones` as
    /// paired. bluezoo's second adapter, the simulated Cascable, is 00:00:00:22:22:22.
    static func paired(
        _ phones: [String] = ["00:00:00:22:22:22"], in dir: URL, bus: PrivateBus
    ) throws -> [String: String] {
        let state = dir.appendingPathComponent("state")
        let list = PairedPhones(directory: state.appendingPathComponent("rig").path)
        for phone in phones { try list.add(PairedPhones.Phone(address: phone, adapter: "hci0")) }
        var environment = bus.environment
        environment["XDG_STATE_HOME"] = state.path
        return environment
    }

    static func startBluezoo(_ bus: PrivateBus) async throws -> DBusConnection {
        let connection = try DBusConnection(bus: .address(bus.address))
        try bus.launch("bluezoo", ["--auto-enable", "-a", "00:00:00:11:11:11", "-a", "00:00:00:22:22:22"])
        // Deadlines, not waits: a Python emulator starting beside a loaded full run took over 30 s.
        _ = try await poll(for: .seconds(120)) { try await connection.nameHasOwner("org.bluez") ? true : nil }
        _ = try await poll(for: .seconds(120)) { () -> Bool? in
            let managed = try? await connection.managedObjects(destination: "org.bluez", path: "/")
            let ready = ["/org/bluez/hci0", "/org/bluez/hci1"].allSatisfy { managed?.objects[$0]?["org.bluez.GattManager1"] != nil }
            return ready ? true : nil
        }
        return connection
    }

    @Test func threeStepProgramFollowsTheDocumentedFlow() async throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let control = try await Self.startBluezoo(bus)
        defer { control.close() }
        let dir = try TestTools.temporaryDirectory()
        let programPath = dir.appendingPathComponent("steps.json").path
        try Self.program.write(toFile: programPath, atomically: true, encoding: .utf8)
        let tracePath = dir.appendingPathComponent("trace.csv").path
        let logPath = dir.appendingPathComponent("cascable.jsonl").path

        let rig = TestProcess()
        rig.executableURL = TestTools.rigExecutable
        rig.arguments = ["play", programPath, "--adapter", "hci0", "--trace", tracePath, "--no-realtime"]
        rig.environment = try Self.paired(in: dir, bus: bus)
        let out = Pipe()
        let err = Pipe()
        rig.standardOutput = out
        rig.standardError = err
        rig.standardInput = FileHandle.nullDevice
        try rig.run()
        let outText = PipeCollector(out)
        let errText = PipeCollector(err)

        let script = TestTools.packageRoot.appendingPathComponent("Tests/RigStepSyncTests/cascable_sim.py").path
        let sim = try bus.launch("python3", [script, "--adapter", "hci1", "--waits", "3", "--log", logPath])
        _ = try await poll(every: .milliseconds(100), for: .seconds(120)) { sim.isRunning ? nil : true }
        _ = try await poll(every: .milliseconds(100), for: .seconds(30)) { rig.isRunning ? nil : true }
        #expect(sim.terminationStatus == 0)
        #expect(rig.terminationStatus == 0, "rig stderr: \(errText.text)")

        let entries = try String(contentsOfFile: logPath, encoding: .utf8).split(separator: "\n").map {
            try JSONDecoder().decode(Entry.self, from: Data($0.utf8))
        }
        // Both button states start up and are readable.
        #expect(entries.filter { $0.event == "read" }.map(\.value) == [.int(0), .int(0)])
        // Malformed writes with response are refused.
        let writes = entries.filter { $0.event == "write" }
        #expect(writes.prefix(3).allSatisfy { $0.ok == false })
        // Two waits move the rig and get exactly one press and release each; the third
        // (after the last step) ends the program without a press.
        let presses = entries.filter { $0.event == "pressed" }
        #expect(presses.map(\.index) == [0, 1])
        #expect(presses.allSatisfy { $0.states == [1, 0] })
        #expect(entries.contains { $0.event == "no-press" && $0.index == 2 })
        // No notification while Continue Available was 0.
        var available = false
        for entry in entries {
            if entry.event == "write", entry.char == "continueAvailable", entry.ok == true {
                if entry.value == .string("01") { available = true }
                if entry.value == .string("00") { available = false }
            }
            if entry.event == "notify" { #expect(available, "a notification at t=\(entry.t) while continue was unavailable") }
        }
        // The zero-length message shows the default text, and only while continue is
        // available: in between, the recipe is running.
        let shown = outText.text.split(separator: "\n").filter {
            $0.hasPrefix("Cascable: \(BUIService.defaultMessage)") || $0.hasPrefix("Cascable: \(BUIService.recipeRunningMessage)")
        }
        #expect(shown.contains { $0.hasSuffix(BUIService.defaultMessage) })
        #expect(shown.contains { $0.hasSuffix(BUIService.recipeRunningMessage) })
        // Three waits: the message each time continue became available, the recipe running in between.
        #expect(shown.filter { $0.hasSuffix(BUIService.defaultMessage) }.count == 3, "\(shown)")
        #expect(zip(shown, shown.dropFirst()).allSatisfy { $0 != $1 }, "each change shown once: \(shown)")
        // Every step was reached, in order, before its press (the cycle log says so).
        let settled = errText.text.split(separator: "\n").filter { $0.contains("pressing continue") }
        #expect(settled.count == 2)
        #expect(settled.first?.contains("step 2 of 3") == true && settled.last?.contains("step 3 of 3") == true)
        let trace = try String(contentsOfFile: tracePath, encoding: .utf8)
        for pose in ["-20.0000", "20.0000"] { #expect(trace.contains(",pan,0,") && trace.contains(pose)) }
    }

    @Test func aRigHomeMessageSendsTheRigHomeBetweenSteps() async throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let control = try await Self.startBluezoo(bus)
        defer { control.close() }
        let dir = try TestTools.temporaryDirectory()
        let programPath = dir.appendingPathComponent("steps.json").path
        // Home is pan 7, tilt -4: a pose no step has.
        let program = Self.program
            .replacingOccurrences(of: #""name": "pan", "channel": 0,"#, with: #""name": "pan", "channel": 0, "home": 7,"#)
            .replacingOccurrences(of: #""name": "tilt", "channel": 1,"#, with: #""name": "tilt", "channel": 1, "home": -4,"#)
        try program.write(toFile: programPath, atomically: true, encoding: .utf8)
        let tracePath = dir.appendingPathComponent("trace.csv").path
        let logPath = dir.appendingPathComponent("cascable.jsonl").path

        let rig = TestProcess()
        rig.executableURL = TestTools.rigExecutable
        rig.arguments = ["play", programPath, "--adapter", "hci0", "--trace", tracePath, "--no-realtime"]
        rig.environment = try Self.paired(in: dir, bus: bus)
        let out = Pipe()
        let err = Pipe()
        rig.standardOutput = out
        rig.standardError = err
        rig.standardInput = FileHandle.nullDevice
        try rig.run()
        let errText = PipeCollector(err)
        _ = PipeCollector(out)

        // Wait 1: step 2; wait 2: "rig: home"; wait 3: step 3 (the one after step 2); wait 4: the end.
        let script = TestTools.packageRoot.appendingPathComponent("Tests/RigStepSyncTests/cascable_sim.py").path
        let sim = try bus.launch("python3", [script, "--adapter", "hci1", "--waits", "4", "--log", logPath, "--messages", "|rig: home||"])
        _ = try await poll(every: .milliseconds(100), for: .seconds(120)) { sim.isRunning ? nil : true }
        _ = try await poll(every: .milliseconds(100), for: .seconds(30)) { rig.isRunning ? nil : true }
        #expect(sim.terminationStatus == 0)
        #expect(rig.terminationStatus == 0, "rig stderr: \(errText.text)")

        let entries = try String(contentsOfFile: logPath, encoding: .utf8).split(separator: "\n").map {
            try JSONDecoder().decode(Entry.self, from: Data($0.utf8))
        }
        // One press for each of the first three waits (home included), none for the last.
        let presses = entries.filter { $0.event == "pressed" }
        #expect(presses.map(\.index) == [0, 1, 2])
        #expect(presses.allSatisfy { $0.states == [1, 0] })
        #expect(entries.contains { $0.event == "no-press" && $0.index == 3 })
        // The presses came settled at step 2, at home, then at step 3, in that order.
        let settled = errText.text.split(separator: "\n").filter { $0.contains("pressing continue") }
        #expect(settled.count == 3, "\(settled)")
        if settled.count == 3 {
            #expect(settled[0].contains("at step 2 of 3"))
            #expect(settled[1].contains("at home"))
            #expect(settled[2].contains("at step 3 of 3"))
        }
        // The rig really stood at home: the trace holds pan 7 and tilt -4 as positions.
        let rows = try String(contentsOfFile: tracePath, encoding: .utf8).split(separator: "\n").dropFirst().map { $0.split(separator: ",") }
        #expect(rows.contains { $0.count == 6 && $0[1] == "pan" && Double($0[4]) == 7 })
        #expect(rows.contains { $0.count == 6 && $0[1] == "tilt" && Double($0[4]) == -4 })
        // Three program steps for four waits, one of them home: no mismatch warning.
        #expect(!errText.text.contains("check that its pictures match the poses"), "\(errText.text)")
    }

    @Test func reRegistersWhenTheBluetoothDaemonRestarts() async throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let control = try await Self.startBluezoo(bus)
        defer { control.close() }
        let connection = try DBusConnection(bus: .address(bus.address))
        defer { connection.close() }
        var config = StepSyncConfig()
        config.requirePairing = false
        let peripheral = BUIPeripheral(
            connection: connection, config: config, logger: Logger(label: "test"),
            onInput: { _ in }, onMessage: { _ in })
        try await peripheral.start()
        #expect(peripheral.registrationCount == 1)
        // Kill the emulator and start a new one on the same bus.
        bus.stopChildren()
        _ = try await Self.startBluezoo(bus)
        _ = try await poll(for: .seconds(30)) { peripheral.registrationCount >= 2 ? true : nil }
        peripheral.stop()
    }
}
