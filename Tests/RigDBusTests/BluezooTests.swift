import Foundation
import RigTestSupport
import Synchronization
import Testing

@testable import RigDBus

/// Tier 2 with the bluezoo BlueZ emulator on a private bus (TESTING.md).
@Suite struct BluezooTests {
    @Test func getManagedObjectsFindsBothEmulatedAdapters() async throws {
        let bus = try PrivateBus()
        // The layer connects to "the system bus" at the private bus's address, as the rig
        // would with DBUS_SYSTEM_BUS_ADDRESS pointing there.
        let connection = try DBusConnection(bus: .address(bus.address))
        defer { connection.close() }
        try bus.launch("bluezoo", ["--auto-enable", "-a", "00:00:00:11:11:11", "-a", "00:00:00:22:22:22"])

        // bluezoo takes its name first, then exports the object manager and the adapters:
        // poll for the name, then for both powered adapters (bounded loops, no fixed sleeps).
        _ = try await poll { try await connection.nameHasOwner("org.bluez") ? true : nil }
        let objects = try await poll { () -> DBusManagedObjects? in
            guard let managed = try? await connection.managedObjects(destination: "org.bluez", path: "/") else { return nil }
            let powered = managed.objects.values.filter { $0["org.bluez.Adapter1"]?["Powered"] == .boolean(true) }
            return powered.count >= 2 ? managed : nil
        }
        let hci0 = try #require(objects.objects["/org/bluez/hci0"]?["org.bluez.Adapter1"])
        let hci1 = try #require(objects.objects["/org/bluez/hci1"]?["org.bluez.Adapter1"])
        let addresses = Set([hci0["Address"]?.string, hci1["Address"]?.string].compactMap { $0 })
        #expect(addresses == ["00:00:00:11:11:11", "00:00:00:22:22:22"])
        #expect(hci0["Powered"] == .boolean(true))
        // An error reply from the emulator comes back as a typed DBusError.
        do {
            _ = try await connection.call(
                destination: "org.bluez", path: "/org/bluez/hci0", interface: "org.bluez.Adapter1",
                method: "NoSuchMethod")
            Issue.record("an unknown method must fail")
        } catch let error as DBusError {
            #expect(error.name.hasPrefix("org.freedesktop.DBus.Error."))
        }
    }

    /// bluez(oo) calls back `GetManagedObjects` and `GetAll` on the application before it
    /// replies to `RegisterApplication`: this only succeeds if a pending call never blocks the
    /// thread that serves exported objects.
    @Test func registerApplicationIsServedWhileItsCallIsPending() async throws {
        let bus = try PrivateBus()
        let connection = try DBusConnection(bus: .address(bus.address))
        defer { connection.close() }
        try bus.launch("bluezoo", ["--auto-enable", "-a", "00:00:00:11:11:11"])
        _ = try await poll { try await connection.nameHasOwner("org.bluez") ? true : nil }
        _ = try await poll { () -> Bool? in
            let managed = try? await connection.managedObjects(destination: "org.bluez", path: "/")
            return managed?.objects["/org/bluez/hci0"]?["org.bluez.GattManager1"] != nil ? true : nil
        }

        let service = "/org/rig/app/service0"
        let reads = Mutex(0)
        let characteristic = service + "/char0"
        try await connection.export(DBusObject(path: "/org/rig/app", interfaces: [], isObjectManager: true))
        try await connection.export(
            DBusObject(
                path: service,
                interfaces: [
                    DBusInterface(
                        "org.bluez.GattService1",
                        properties: [
                            "UUID": .constant(.string("9a43142a-f619-41ff-945d-527023ef5b9d")),
                            "Primary": .constant(.boolean(true)),
                        ])
                ]))
        try await connection.export(
            DBusObject(
                path: characteristic,
                interfaces: [
                    DBusInterface(
                        "org.bluez.GattCharacteristic1",
                        methods: [
                            "ReadValue": DBusMethod(in: "a{sv}", out: "ay") { _ in [.bytes([0])] },
                            "WriteValue": DBusMethod(in: "aya{sv}") { _ in [] },
                            "StartNotify": DBusMethod { _ in [] },
                            "StopNotify": DBusMethod { _ in [] },
                            "Confirm": DBusMethod { _ in [] },
                        ],
                        properties: [
                            "UUID": DBusProperty(
                                signature: "s",
                                get: {
                                    reads.withLock { $0 += 1 }
                                    return .string("eb366ce4-1952-4a55-a319-7e27a865554a")
                                }),
                            "Service": .constant(.objectPath(service)),
                            "Flags": .constant(.strings(["read", "notify"])),
                            "Notifying": .constant(.boolean(false)),
                        ])
                ]))

        let readsBefore = reads.withLock { $0 }
        let reply = try await connection.call(
            destination: "org.bluez", path: "/org/bluez/hci0", interface: "org.bluez.GattManager1",
            method: "RegisterApplication", args: [.objectPath("/org/rig/app"), .vardict([:])],
            expecting: "", timeout: .seconds(10))
        #expect(reply.isEmpty)
        // bluezoo read the characteristic (GetManagedObjects / GetAll) while the call was pending.
        #expect(reads.withLock { $0 } > readsBefore)
        _ = try await connection.call(
            destination: "org.bluez", path: "/org/bluez/hci0", interface: "org.bluez.GattManager1",
            method: "UnregisterApplication", args: [.objectPath("/org/rig/app")], expecting: "")
    }
}
