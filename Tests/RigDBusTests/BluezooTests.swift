import Foundation
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
            _ = try await connection.call(destination: "org.bluez", path: "/org/bluez/hci0", interface: "org.bluez.Adapter1",
                                          method: "NoSuchMethod")
            Issue.record("an unknown method must fail")
        } catch let error as DBusError {
            #expect(error.name.hasPrefix("org.freedesktop.DBus.Error."))
        }
    }
}
