import ArgumentParser
import FoundationEssentials
import Glibc
import Logging
import RigBluetooth
import RigCore
import RigDBus
import RigFormat
import RigRuntime
import RigStepSync
import Synchronization

/// `rig pair`: bonds one phone for the Cascable peripheral and keeps the list of bonded
/// phones whose writes it accepts (docs/cascable.md, Pairing).
struct PairCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pair",
        abstract: "Pair a phone for Cascable step sync, or list and remove paired phones.",
        discussion: """
            rig pair --rig FILE makes the rig's adapter (stepSync.adapter) pairable for \
            --seconds, advertises the Cascable accessory and waits for one phone \
            to pair: the passkey to type on the phone is printed here. The phone is then trusted \
            and added to the paired-phones list in the state directory; only phones on that list \
            can press the rig's buttons. Ctrl-C stops waiting and leaves the adapter neither \
            pairable nor discoverable. Run it as the user the rig runs as (sudo -u rig rig pair …).
            """
    )

    @Option(help: ArgumentHelp("The rig file (its stepSync section names the adapter).", valueName: "FILE"))
    var rig: String?

    @Flag(help: "List the paired phones.")
    var list = false

    @Option(help: ArgumentHelp("Remove this phone from the list and forget its bond.", valueName: "ADDR"))
    var remove: String?

    @Option(help: "How long to wait for a phone, in seconds.")
    var seconds: Double = 120

    func validate() throws {
        let modes = [rig != nil && !list && remove == nil, list, remove != nil].filter { $0 }.count
        guard modes == 1 else { throw ValidationError("give one of --rig FILE (pair a phone), --list or --remove ADDR") }
        guard seconds >= 10, seconds <= 3600 else { throw ValidationError("--seconds must be in 10…3600") }
        if let remove, Self.normalized(remove) == nil {
            throw ValidationError("--remove \(remove): not a Bluetooth address; write it like AA:BB:CC:DD:EE:FF")
        }
    }

    static func normalized(_ address: String) -> String? {
        let parts = address.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 6, parts.allSatisfy({ $0.count == 2 && UInt8($0, radix: 16) != nil }) else { return nil }
        return address.uppercased()
    }

    func run() throws {
        guard let phones = PairedPhones.inDefaultDirectory() else {
            printError("error: no state directory for the paired-phones list (set HOME or XDG_STATE_HOME)")
            throw ExitCode(2)
        }
        if list { return try Self.list(phones) }
        if let remove, let address = Self.normalized(remove) { return try Self.remove(address, from: phones) }
        guard let rig else { throw ExitCode(2) }
        let config: StepSyncConfig
        do { config = try StepSyncConfig.parse(FileLoading.loadRig(rig).stepSync) } catch let error as FileError {
            printError(error.description)
            throw ExitCode(2)
        }
        // A broken list is reported before the adapter is opened to anyone.
        do { _ = try phones.load() } catch {
            printError("\(error)")
            throw ExitCode(2)
        }
        let seconds = self.seconds
        try runBlocking { try await Self.pair(config: config, phones: phones, seconds: seconds) }
    }

    private static func list(_ phones: PairedPhones) throws {
        let entries: [PairedPhones.Phone]
        do { entries = try phones.load() } catch {
            printError("\(error)")
            throw ExitCode(2)
        }
        if entries.isEmpty {
            say("no phone paired (\(phones.filePath)): run `rig pair --rig FILE`")
            return
        }
        for phone in entries {
            say("\(phone.address)  \(phone.adapter)  \(phone.name ?? "(no name)")")
        }
    }

    private static func remove(_ address: String, from phones: PairedPhones) throws {
        let removed: PairedPhones.Phone?
        do { removed = try phones.remove(address: address) } catch let error as FileError {
            printError(error.description)
            throw ExitCode(2)
        } catch {
            printError("error: \(error)")
            throw ExitCode(1)
        }
        guard let removed else {
            printError("error: \(address) is not a paired phone (`rig pair --list`)")
            throw ExitCode(1)
        }
        say("removed \(removed.name ?? removed.address) (\(removed.address)) from the paired phones: its writes are refused now")
        // Forget the bond too, under every address BlueZ knew the phone by.
        let forgotten = try runBlocking { () async -> String? in
            do {
                let bus = try DBusConnection(bus: .system)
                defer { bus.close() }
                let adapter = try await BlueZAdapter.named(removed.adapter, on: bus)
                var gone = false
                var lastError: String?
                for known in [removed.address] + removed.seenAs {
                    do {
                        try await adapter.removeDevice(BlueZDevice.path(adapter: removed.adapter, address: known))
                        gone = true
                    } catch { lastError = "\(error)" }
                }
                return gone ? nil : (lastError ?? "unknown device")
            } catch { return "\(error)" }
        }
        if let forgotten {
            say("BlueZ had no bond to remove on \(removed.adapter) (\(forgotten))")
        } else {
            say("forgot its bond on \(removed.adapter)")
        }
    }

    /// What ends the wait for a phone.
    enum Event: Sendable {
        case paired(String)
        case timedOut
        case interrupted(Int32)
    }

    private static func pair(config: StepSyncConfig, phones: PairedPhones, seconds: Double) async throws {
        let (events, feed) = AsyncStream.makeStream(of: Event.self)
        let trap = SignalTrap(stop: { feed.yield(.interrupted($0)) }, abort: { feed.yield(.interrupted($0)) })
        defer { trap.cancel() }
        let bus: DBusConnection
        let adapter: BlueZAdapter
        do {
            bus = try DBusConnection(bus: .system)
            adapter = try await BlueZAdapter.named(config.adapter, on: bus)
        } catch {
            printError("error: \(error)")
            throw ExitCode(1)
        }
        defer { bus.close() }
        let agent = PairingAgent(
            bus: bus,
            onPasskey: { device, passkey in
                let name = BlueZDevice.address(fromPath: device) ?? device
                say("passkey for \(name): \(zeroPadded(Int(passkey), 6))  (type it on the phone)")
            },
            onRefused: { device, request in
                say("refused \(request)\(device.flatMap(BlueZDevice.address(fromPath:)).map { " from \($0)" } ?? "")")
            })
        let timeout = UInt32(seconds.rounded(.up))
        var peripheral: BUIPeripheral?
        do {
            // Subscribe before the adapter opens, so no pairing is missed.
            let changes = try await bus.signals(
                matching: .propertiesChanged(sender: BlueZ.service, pathNamespace: adapter.path, interface: "org.bluez.Device1"))
            let watcher = Task {
                for await signal in changes {
                    guard let change = try? DBusPropertiesChanged(signal) else { continue }
                    if change.changed["Paired"]?.bool == true { feed.yield(.paired(change.path)) }
                }
            }
            defer { watcher.cancel() }
            let timer = Task {
                try? await Task.sleep(for: .seconds(seconds))
                feed.yield(.timedOut)
            }
            defer { timer.cancel() }
            try await agent.register()
            try await adapter.set("PairableTimeout", .uint32(timeout))
            try await adapter.set("Pairable", .boolean(true))
            // Phones find the rig by its LE advertisement (flagged general-discoverable by
            // BlueZ). Adapter1.Discoverable would also open BR/EDR inquiry scan and make a
            // dual-mode controller advertise BR/EDR support, so a phone's Connect or Pair
            // tries BR/EDR ("br-connection-profile-unavailable", seen in the qemu tier):
            // it stays off, and is switched off at the end in case something left it on.
            // The Cascable accessory advertises, so the phone finds the rig by its service
            // and pairs when its first write is refused for want of an authenticated link.
            var logger = Logger(label: "rig.pair")
            logger.logLevel = .error
            let accessory = BUIPeripheral(
                connection: bus, config: config, pairedPhones: phones, logger: logger,
                onInput: { _ in }, onMessage: { _ in })
            peripheral = accessory
            try await accessory.start()
            say(
                "\(config.adapter) is pairable as \"\(accessory.advertisedName)\" for \(Int(timeout)) s: pair the phone now (Cascable: pick the rig in a Wait For Input block, or pair it in the phone's Bluetooth settings); Ctrl-C stops"
            )
            var outcome: Event = .timedOut
            for await event in events {
                outcome = event
                break
            }
            switch outcome {
            case .paired(let path):
                try await accept(path, adapter: adapter, config: config, phones: phones)
            case .timedOut:
                say("no phone paired within \(Int(timeout)) s")
                await close(adapter: adapter, agent: agent, peripheral: accessory)
                throw ExitCode(1)
            case .interrupted(let signo):
                say("\(SignalTrap.name(signo)): stopped waiting; no phone paired")
            }
        } catch let exit as ExitCode {
            throw exit
        } catch {
            printError("error: \(error)")
            await close(adapter: adapter, agent: agent, peripheral: peripheral)
            throw ExitCode(1)
        }
        await close(adapter: adapter, agent: agent, peripheral: peripheral)
    }

    /// Trusts the bonded phone and puts it on the list.
    private static func accept(_ path: String, adapter: BlueZAdapter, config: StepSyncConfig, phones: PairedPhones) async throws {
        let device = BlueZDevice(bus: adapter.bus, path: path)
        let properties = try await device.properties()
        guard let address = properties["Address"]?.string ?? BlueZDevice.address(fromPath: path) else {
            throw BlueZCentralError.bluez(operation: "reading \(path)", message: "no address")
        }
        try await device.set("Trusted", .boolean(true))
        let name = properties["Alias"]?.string ?? properties["Name"]?.string
        let seenAs = BlueZDevice.address(fromPath: path).map { [$0] } ?? []
        let phone = PairedPhones.Phone(address: address, adapter: config.adapter, name: name, seenAs: seenAs)
        try phones.add(phone)
        say("paired \(name ?? address) (\(phone.address)) on \(config.adapter): trusted, and added to \(phones.filePath); its writes are accepted now")
    }

    /// Leaves the adapter neither pairable nor discoverable, whatever happened.
    private static func close(adapter: BlueZAdapter, agent: PairingAgent, peripheral: BUIPeripheral?) async {
        peripheral?.stop()
        try? await adapter.set("Discoverable", .boolean(false))
        try? await adapter.set("Pairable", .boolean(false))
        await agent.unregister()
        say("\(adapter.name) is no longer pairable or discoverable")
    }
}
