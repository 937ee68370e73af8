import Logging
import RigDBus
import Synchronization

/// A GATT server application exported over D-Bus and registered with BlueZ's
/// `GattManager1.RegisterApplication`: one primary service and its characteristics,
/// under an app root that answers `GetManagedObjects`.
///
/// Exports only the documented properties (bluezoo crashes on others), reports
/// `Notifying` false until `StartNotify`, and answers `Confirm` as a no-op.
public final class GattApplication: Sendable {
    public let root: String
    public let serviceUUID: String
    public let characteristics: [GattCharacteristicSpec]
    private let connection: DBusConnection
    private let logger: Logger
    private let notifying: NotifyFlags

    public init(
        connection: DBusConnection, root: String = "/org/rig/bui", serviceUUID: String,
        characteristics: [GattCharacteristicSpec], logger: Logger
    ) {
        self.connection = connection
        self.root = root
        self.serviceUUID = serviceUUID.lowercased()
        self.characteristics = characteristics
        self.logger = logger
        notifying = NotifyFlags(count: characteristics.count)
    }

    var servicePath: String { root + "/service0" }
    public func path(ofCharacteristic index: Int) -> String { servicePath + "/char\(index)" }

    /// True while some central is subscribed to characteristic `index`.
    public func isNotifying(_ index: Int) -> Bool { notifying.get(index) }

    /// Exports the objects (once) — before `register`.
    public func export() async throws {
        try await connection.export(DBusObject(path: root, interfaces: [], isObjectManager: true))
        try await connection.export(
            DBusObject(
                path: servicePath,
                interfaces: [
                    DBusInterface(
                        "org.bluez.GattService1",
                        properties: [
                            "UUID": .constant(.string(serviceUUID)),
                            "Primary": .constant(.boolean(true)),
                        ])
                ]))
        for index in characteristics.indices {
            try await connection.export(characteristicObject(index))
        }
    }

    /// `GattManager1.RegisterApplication` on `adapter` (e.g. `/org/bluez/hci0`).
    public func register(adapter: String) async throws {
        _ = try await connection.call(
            destination: "org.bluez", path: adapter, interface: "org.bluez.GattManager1",
            method: "RegisterApplication", args: [.objectPath(root), .vardict([:])],
            expecting: "", timeout: .seconds(10))
    }

    /// Notifies a new value (a `PropertiesChanged` on `Value`), if anyone subscribed.
    public func notify(_ index: Int, value: [UInt8]) async throws {
        try await connection.emitPropertiesChanged(
            path: path(ofCharacteristic: index), interface: "org.bluez.GattCharacteristic1",
            changed: ["Value": .bytes(value)])
    }

    private func characteristicObject(_ index: Int) -> DBusObject {
        let spec = characteristics[index]
        let logger = self.logger
        let notifying = self.notifying
        var methods: [String: DBusMethod] = [:]
        if let read = spec.read {
            methods["ReadValue"] = DBusMethod(in: "a{sv}", out: "ay") { _ in [.bytes(read())] }
        }
        if let write = spec.write {
            methods["WriteValue"] = DBusMethod(in: "aya{sv}") { call in
                guard call.args.count == 2, let value = call.args[0].bytes else {
                    throw DBusError("org.bluez.Error.InvalidArguments", "expected (ay, a{sv})")
                }
                let options = call.args[1].vardict ?? [:]
                if let offset = options["offset"]?.unwrapped, offset != .uint16(0) {
                    throw DBusError("org.bluez.Error.InvalidOffset", "writes start at offset 0")
                }
                let device = options["device"]?.unwrapped.string
                do throws(GattWriteRefusal) {
                    try write(GattWrite(value: value, device: device, withoutResponse: call.noReplyExpected))
                } catch {
                    logger.warning("refused a write to \(spec.uuid) (\(value.count) bytes): \(error)")
                    throw error.dbusError
                }
                return []
            }
        }
        if spec.flags.contains("notify") {
            methods["StartNotify"] = DBusMethod { _ in
                notifying.set(index, true)
                return []
            }
            methods["StopNotify"] = DBusMethod { _ in
                notifying.set(index, false)
                return []
            }
            methods["Confirm"] = DBusMethod { _ in [] }
        }
        var properties: [String: DBusProperty] = [
            "UUID": .constant(.string(spec.uuid)),
            "Service": .constant(.objectPath(servicePath)),
            "Flags": .constant(.strings(spec.flags)),
        ]
        if spec.flags.contains("notify") {
            properties["Notifying"] = DBusProperty(signature: "b") { .boolean(notifying.get(index)) }
        }
        return DBusObject(
            path: path(ofCharacteristic: index),
            interfaces: [
                DBusInterface("org.bluez.GattCharacteristic1", methods: methods, properties: properties)
            ])
    }
}

/// Which characteristics have a subscriber (set by StartNotify/StopNotify on the bus thread).
final class NotifyFlags: Sendable {
    private let flags: Mutex<[Bool]>
    init(count: Int) { flags = Mutex([Bool](repeating: false, count: count)) }
    func get(_ index: Int) -> Bool { flags.withLock { $0[index] } }
    func set(_ index: Int, _ value: Bool) { flags.withLock { $0[index] = value } }
}
