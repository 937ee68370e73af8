import RigTestSupport
import Testing

@testable import RigDBus

/// Tier 2: signal subscriptions between two connections.
@Suite struct SignalTests {
    @Test func propertiesChangedReachesASubscriberByWellKnownName() async throws {
        let pair = try TwoConnections()
        #expect(try await pair.server.requestName("org.rig.Signals") == .primaryOwner)
        let stream = try await pair.client.signals(
            matching: .propertiesChanged(
                sender: "org.rig.Signals", path: "/org/rig/char",
                interface: "org.bluez.GattCharacteristic1"))
        // Neither of these matches: another interface, another path.
        try await pair.server.emitPropertiesChanged(path: "/org/rig/char", interface: "org.rig.Other", changed: ["Value": .bytes([0])])
        try await pair.server.emitPropertiesChanged(path: "/org/rig/other", interface: "org.bluez.GattCharacteristic1", changed: ["Value": .bytes([0])])
        try await pair.server.emitPropertiesChanged(
            path: "/org/rig/char", interface: "org.bluez.GattCharacteristic1",
            changed: ["Value": .bytes([1])], invalidated: ["Notifying"])
        let signal = try await next(stream)
        let changed = try DBusPropertiesChanged(signal)
        #expect(signal.sender == pair.server.uniqueName)
        #expect(changed.path == "/org/rig/char")
        #expect(changed.interface == "org.bluez.GattCharacteristic1")
        #expect(changed.changed == ["Value": .bytes([1])])
        #expect(changed.invalidated == ["Notifying"])
    }

    @Test func aWellKnownSenderFilterIgnoresOtherSenders() async throws {
        let pair = try TwoConnections()
        let third = try DBusConnection(bus: .address(pair.bus.address))
        defer { third.close() }
        #expect(try await pair.server.requestName("org.rig.Real") == .primaryOwner)
        let stream = try await pair.client.signals(matching: DBusMatchRule(sender: "org.rig.Real", interface: "org.rig.Test", member: "Tick"))
        try await third.emitSignal(path: "/x", interface: "org.rig.Test", member: "Tick", args: [.uint32(1)])
        try await pair.server.emitSignal(path: "/x", interface: "org.rig.Test", member: "Tick", args: [.uint32(2)])
        #expect(try await next(stream).args == [.uint32(2)])
    }

    @Test func genericSubscriptionAndUnsubscribe() async throws {
        let pair = try TwoConnections()
        let all = try await pair.client.signals(matching: DBusMatchRule(pathNamespace: "/org/rig", interface: "org.rig.Test"))
        var ticks = try await pair.client.signals(matching: DBusMatchRule(interface: "org.rig.Test", member: "Tick", arg0: "a"))
        try await pair.server.emitSignal(path: "/org/rig/x/y", interface: "org.rig.Test", member: "Tick", args: [.string("b")])
        try await pair.server.emitSignal(path: "/org/rig", interface: "org.rig.Test", member: "Tick", args: [.string("a")])
        try await pair.server.emitSignal(path: "/elsewhere", interface: "org.rig.Test", member: "Tock", args: [])
        try await pair.server.emitSignal(path: "/org/rig/z", interface: "org.rig.Test", member: "Done", args: [])
        #expect(try await next(ticks).args == [.string("a")])
        var iterator = all.makeAsyncIterator()
        #expect(await iterator.next()?.path == "/org/rig/x/y")
        #expect(await iterator.next()?.path == "/org/rig")
        #expect(await iterator.next()?.member == "Done")
        // Dropping a stream removes its subscription.
        ticks = AsyncStream { $0.finish() }
        _ = ticks
        #expect(
            try await withDeadline {
                while try await pair.client.perform({ $0.subscriptions.count }) != 1 {
                    try await pair.client.emitSignal(path: "/", interface: "org.rig.Wait", member: "Loop")
                }
                return true
            })
    }

    @Test func objectManagerAnnouncesExportsBelowItsRoot() async throws {
        let pair = try TwoConnections()
        try await pair.server.export(DBusObject(path: "/org/rig/app", interfaces: [], isObjectManager: true))
        let added = try await pair.client.signals(matching: .interfacesAdded(sender: pair.server.uniqueName, root: "/org/rig/app"))
        let removed = try await pair.client.signals(matching: .interfacesRemoved(sender: pair.server.uniqueName))
        try await pair.server.export(
            DBusObject(
                path: "/org/rig/app/service0",
                interfaces: [
                    DBusInterface("org.bluez.GattService1", properties: ["UUID": .constant(.string("ffe0")), "Primary": .constant(.boolean(true))])
                ]))
        let announcement = try DBusInterfacesAdded(try await next(added))
        #expect(announcement.path == "/org/rig/app/service0")
        #expect(announcement.interfaces["org.bluez.GattService1"] == ["UUID": .string("ffe0"), "Primary": .boolean(true)])
        try await pair.server.unexport(path: "/org/rig/app/service0")
        let removal = try DBusInterfacesRemoved(try await next(removed))
        #expect(removal.path == "/org/rig/app/service0")
        #expect(removal.interfaces == ["org.bluez.GattService1"])
    }
}
