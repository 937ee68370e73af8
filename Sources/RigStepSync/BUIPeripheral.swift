import FoundationEssentials
import Glibc
import Logging
import RigBluetooth
import RigCore
import RigDBus
import Synchronization

/// The rig as a Cascable "Basic User Input" accessory: the five characteristics, the
/// advertisement, and re-registration when bluetoothd restarts or the adapter returns.
///
/// Writes are validated here: a wrong length or an out-of-range value changes nothing, is
/// logged, and is refused with `org.bluez.Error.InvalidValueLength` (or `Failed`) where
/// BlueZ waits for an answer (a write without response gets none).
///
/// With `requirePairing` (the default) the writable characteristics are flagged
/// `encrypt-authenticated-write`, so bluetoothd itself refuses a write over a link that is
/// not encrypted with an authenticated (passkey) bond, and every write that reaches the
/// handler must come from a phone on the paired-phones list (``PairedPhones``, kept by
/// `rig pair`): any other is refused with `org.bluez.Error.NotAuthorized` before it is
/// looked at. An empty list refuses every write.
public final class BUIPeripheral: Sendable {
    public struct State: Sendable, Equatable {
        public var message = BUIService.defaultMessage
        public var continueAvailable = false
        public var stopAvailable = false
        public var continueButton = BUIButtonState.up
        public var stopButton = BUIButtonState.up
    }

    public let config: StepSyncConfig
    public let advertisedName: String
    private let connection: DBusConnection
    private let app: GattApplication
    private let advertisement: LEAdvertisement
    private let logger: Logger
    private let state = StateBox()
    private let onInput: @Sendable (BUICycle.Input) -> Void
    private let onMessage: @Sendable (String) -> Void
    private let notifications: AsyncStream<(Int, UInt8)>.Continuation
    private let tasks = Mutex<[Task<Void, Never>]>([])
    private let registrations = Atomic<Int>(0)

    /// - Parameters:
    ///   - onInput: Continue/Stop Available changes, on the bus thread.
    ///   - onMessage: a new user message (the default text for a zero-length one).
    public let pairedPhones: PairedPhones?

    /// - Parameters:
    ///   - pairedPhones: the list writes are checked against when `config.requirePairing`;
    ///     nil (no state directory) refuses every write then.
    public init(
        connection: DBusConnection, config: StepSyncConfig,
        pairedPhones: PairedPhones? = PairedPhones.inDefaultDirectory(), logger: Logger,
        onInput: @escaping @Sendable (BUICycle.Input) -> Void,
        onMessage: @escaping @Sendable (String) -> Void
    ) {
        self.connection = connection
        self.config = config
        self.logger = logger
        self.onInput = onInput
        self.onMessage = onMessage
        self.pairedPhones = pairedPhones
        let host = ProcessInfo.processInfo.hostName.split(separator: ".").first.map(String.init) ?? "rig"
        advertisedName = LEAdvertisement.fit(config.name ?? "rig \(host)")
        advertisement = LEAdvertisement(serviceUUID: BUIService.service, localName: advertisedName)
        let (stream, continuation) = AsyncStream.makeStream(of: (Int, UInt8).self, bufferingPolicy: .bufferingNewest(64))
        notifications = continuation
        app = GattApplication(
            connection: connection, serviceUUID: BUIService.service,
            characteristics: Self.characteristics(
                config: config, pairedPhones: pairedPhones, state: state, logger: logger,
                onInput: onInput, onMessage: onMessage),
            logger: logger)
        let app = self.app
        // One task sends notifications in order: a press (0x01) never overtakes its release.
        let sender = Task {
            for await (index, value) in stream {
                do { try await app.notify(index, value: [value]) } catch {
                    logger.warning("could not notify a button state: \(error)")
                }
            }
        }
        tasks.withLock { $0.append(sender) }
    }

    public var current: State { state.lock.withLock { $0 } }

    /// A central is subscribed to Continue Button State: Cascable is connected.
    public var isConnected: Bool { app.isNotifying(BUIService.Index.continueButton) }

    /// How many times the application has been registered with BlueZ.
    public var registrationCount: Int { registrations.load(ordering: .relaxed) }

    private var adapterPath: String { "/org/bluez/" + config.adapter }

    /// Exports the objects, registers the application and the advertisement, and keeps
    /// them registered across bluetoothd restarts.
    public func start() async throws {
        if config.requirePairing {
            guard let pairedPhones else {
                throw BUIError(
                    "no state directory for the paired-phones list (set HOME or XDG_STATE_HOME), so no phone could write: see docs/cascable.md, Pairing"
                )
            }
            let phones: [PairedPhones.Phone]
            do { phones = try pairedPhones.load() } catch { throw BUIError("\(error)") }
            if phones.isEmpty {
                logger.warning("no phone paired: run `rig pair` (until then every write from a phone is refused)")
            } else {
                logger.info("writes accepted from \(phones.count) paired phone\(phones.count == 1 ? "" : "s") (\(pairedPhones.filePath))")
            }
        }
        try await app.export()
        try await advertisement.export(on: connection)
        let owners = try await connection.signals(
            matching: DBusMatchRule(
                sender: "org.freedesktop.DBus", interface: "org.freedesktop.DBus",
                member: "NameOwnerChanged", arg0: "org.bluez"))
        let added = try await connection.signals(matching: .interfacesAdded(sender: "org.bluez"))
        try await register()
        let watcher = Task { [self] in
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    for await signal in owners where (signal.args.count == 3 && !(signal.args[2].string ?? "").isEmpty) {
                        await self.reregister(reason: "bluetoothd restarted")
                    }
                }
                group.addTask {
                    for await signal in added {
                        guard let event = try? DBusInterfacesAdded(signal), event.path == self.adapterPath,
                            event.interfaces["org.bluez.Adapter1"] != nil
                        else { continue }
                        await self.reregister(reason: "adapter \(self.config.adapter) came back")
                    }
                }
            }
        }
        tasks.withLock { $0.append(watcher) }
    }

    private func register() async throws {
        do {
            try await app.register(adapter: adapterPath)
            try await advertisement.register(on: connection, adapter: adapterPath)
            registrations.add(1, ordering: .relaxed)
            logger.info("Cascable accessory \"\(advertisedName)\" registered on \(config.adapter)")
        } catch let error as DBusError {
            throw BUIError(
                "could not register the Cascable accessory on \(config.adapter): \(error) (is bluetoothd running, the adapter powered, and are we allowed on the system bus? see docs/cascable.md)"
            )
        }
    }

    private func reregister(reason: String) async {
        logger.notice("\(reason): registering the Cascable accessory again")
        // bluez(oo) needs a moment to export the adapter after taking its name: retry briefly.
        for attempt in 1...20 {
            do {
                try await register()
                return
            } catch {
                if attempt == 20 { logger.error("\(error)") }
                try? await Task.sleep(for: .milliseconds(100 * attempt))
            }
        }
    }

    /// Sets and notifies Continue Button State.
    public func setContinueButton(_ value: BUIButtonState) {
        state.lock.withLock { $0.continueButton = value }
        notifications.yield((BUIService.Index.continueButton, value.rawValue))
    }

    /// Sets and notifies Stop Button State.
    public func setStopButton(_ value: BUIButtonState) {
        state.lock.withLock { $0.stopButton = value }
        notifications.yield((BUIService.Index.stopButton, value.rawValue))
    }

    public func stop() {
        notifications.finish()
        for task in tasks.withLock({ $0 }) { task.cancel() }
    }

    static func characteristics(
        config: StepSyncConfig, pairedPhones: PairedPhones?, state: StateBox, logger: Logger,
        onInput: @escaping @Sendable (BUICycle.Input) -> Void,
        onMessage: @escaping @Sendable (String) -> Void
    ) -> [GattCharacteristicSpec] {
        // bluetoothd checks the attribute's permissions on Write Commands too (it drops
        // them silently), so write-without-response stays offered as the spec lists it.
        let writeFlags =
            config.requirePairing
            ? ["encrypt-authenticated-write", "write-without-response"] : ["write", "write-without-response"]
        @Sendable func admit(_ write: GattWrite) throws(GattWriteRefusal) {
            guard config.requirePairing else { return }
            try Self.admit(device: write.device, pairedPhones: pairedPhones, alsoAllowed: config.allowedCentrals)
        }
        @Sendable func flag(_ write: GattWrite, _ name: String) throws(GattWriteRefusal) -> Bool {
            try admit(write)
            guard write.value.count == 1 else {
                throw .invalidValueLength("\(name) takes 1 byte, got \(write.value.count)")
            }
            guard write.value[0] <= 1 else {
                throw .failed("\(name) takes 0x00 or 0x01, got 0x\(String(write.value[0], radix: 16))")
            }
            return write.value[0] == 1
        }
        return [
            GattCharacteristicSpec(
                uuid: BUIService.userMessage, flags: writeFlags,
                write: { write throws(GattWriteRefusal) in
                    try admit(write)
                    guard let text = String(validating: write.value, as: UTF8.self) else {
                        throw .failed("the user message is not UTF-8")
                    }
                    let message = text.isEmpty ? BUIService.defaultMessage : text
                    state.lock.withLock { $0.message = message }
                    onMessage(message)
                }),
            GattCharacteristicSpec(
                uuid: BUIService.continueAvailable, flags: writeFlags,
                write: { write throws(GattWriteRefusal) in
                    let on = try flag(write, "Continue Available")
                    state.lock.withLock { $0.continueAvailable = on }
                    onInput(.continueAvailable(on))
                }),
            GattCharacteristicSpec(
                uuid: BUIService.stopAvailable, flags: writeFlags,
                write: { write throws(GattWriteRefusal) in
                    let on = try flag(write, "Stop Available")
                    state.lock.withLock { $0.stopAvailable = on }
                    onInput(.stopAvailable(on))
                }),
            GattCharacteristicSpec(
                uuid: BUIService.continueButtonState, flags: ["read", "notify"],
                read: { [state.lock.withLock { $0.continueButton.rawValue }] }),
            GattCharacteristicSpec(
                uuid: BUIService.stopButtonState, flags: ["read", "notify"],
                read: { [state.lock.withLock { $0.stopButton.rawValue }] }),
        ]
    }

    /// Refuses a write unless `device` (the `device` option of `WriteValue`) is a phone on
    /// the paired-phones list. The list is read on every write: a phone `rig pair` adds
    /// or removes while the rig runs counts at once.
    static func admit(device: String?, pairedPhones: PairedPhones?, alsoAllowed: [String] = []) throws(GattWriteRefusal) {
        let address = device.flatMap(Self.address(fromDevicePath:))
        // The rig file's own `allowedCentrals` (bonded outside rig) are admitted as listed.
        if let address, alsoAllowed.contains(where: { $0.uppercased() == address }) { return }
        guard let pairedPhones else { throw .notAuthorized("no paired-phones list (no state directory)") }
        let phones: [PairedPhones.Phone]
        do { phones = try pairedPhones.load() } catch { throw .notAuthorized("the paired-phones list is unreadable: \(error)") }
        guard !phones.isEmpty else { throw .notAuthorized("no phone paired: run `rig pair`") }
        guard let address, phones.contains(where: { $0.matches(address) }) else {
            throw .notAuthorized("\(address ?? "an unknown central") is not a paired phone (`rig pair --list`)")
        }
    }

    /// `/org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF` → `AA:BB:CC:DD:EE:FF`.
    static func address(fromDevicePath path: String) -> String? {
        guard let last = path.split(separator: "/").last, last.hasPrefix("dev_") else { return nil }
        return last.dropFirst(4).replacing("_", with: ":").uppercased()
    }
}

/// The characteristics' values, shared by the bus thread's handlers and the trigger.
final class StateBox: Sendable {
    let lock = Mutex(BUIPeripheral.State())
}

public struct BUIError: Error, CustomStringConvertible, Sendable {
    public var description: String
    init(_ description: String) { self.description = description }
}
