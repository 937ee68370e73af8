import Foundation
import RigTestSupport
import Testing

@testable import RigDBus

/// Tier 2: two connections on a private dbus-daemon, one exporting, one calling.
@Suite struct ExportedObjectTests {
    let pair: TwoConnections
    let state = TestState()

    init() async throws {
        pair = try TwoConnections()
        try await pair.server.export(TestObject.make(state))
    }

    func call(
        _ method: String, _ args: [DBusValue] = [], interface: String? = TestObject.interface,
        // A deadline, not a wait: "Later" replies from a detached task, which a loaded full
        // run's cooperative pool ran past libdbus's 25 s once.
        timeout: Duration = .seconds(60)
    ) async throws -> [DBusValue] {
        try await pair.client.call(
            destination: pair.server.uniqueName, path: TestObject.path, interface: interface,
            method: method, args: args, timeout: timeout)
    }

    @Test func methodsReplyThroughAWellKnownName() async throws {
        #expect(try await pair.server.requestName("org.rig.TestServer") == .primaryOwner)
        #expect(try await pair.server.requestName("org.rig.TestServer") == .alreadyOwner)
        #expect(try await pair.client.requestName("org.rig.TestServer") == .exists)
        #expect(try await pair.client.nameHasOwner("org.rig.TestServer"))
        let echoed = try await pair.client.call(
            destination: "org.rig.TestServer", path: TestObject.path,
            interface: TestObject.interface, method: "Echo", args: [.string("héllo")], timeout: .seconds(60))
        #expect(echoed == [.string("héllo")])
        #expect(try await call("Add", [.int32(40), .int32(2)]) == [.int32(42)])
        #expect(try await call("Add", [.int32(1), .int32(2)], interface: nil) == [.int32(3)])
        #expect(try await call("Later", [.uint32(21)]) == [.uint32(42)])
    }

    @Test func handlerErrorsAndBadCallsBecomeTypedErrors() async throws {
        await #expect(throws: DBusError("org.bluez.Error.NotPermitted", "refused on purpose")) { try await call("Refuse") }
        await #expect(throws: DBusError.self) { try await call("Add", [.string("x")]) }
        do {
            _ = try await call("Add", [.string("x")])
        } catch let error as DBusError {
            #expect(error.name == DBusError.invalidArgs)
        }
        await #expect(throws: DBusError.self) { try await call("NoSuchMethod") }
        do {
            _ = try await call("WrongReply")
            Issue.record("a reply of the wrong type must become an error")
        } catch let error as DBusError {
            #expect(error.name == DBusError.failed)
        }
        do {
            _ = try await call("Echo", [.string("x")], interface: "org.rig.Missing")
            Issue.record("unknown interface must fail")
        } catch let error as DBusError {
            #expect(error.name == DBusError.unknownInterface)
        }
    }

    @Test func replySignatureIsCheckedByTheCaller() async throws {
        await #expect(throws: DBusMarshalError.signatureMismatch(expected: "u", actual: "s")) {
            try await pair.client.call(
                destination: pair.server.uniqueName, path: TestObject.path,
                interface: TestObject.interface, method: "Echo", args: [.string("x")], expecting: "u")
        }
    }

    @Test func propertiesGetGetAllSet() async throws {
        let props = "org.freedesktop.DBus.Properties"
        #expect(try await call("Get", [.string(TestObject.interface), .string("Name")], interface: props) == [.variant(.string("rig"))])
        let all = try await call("GetAll", [.string(TestObject.interface)], interface: props)
        #expect(all.first?.vardict == ["Name": .string("rig"), "Level": .uint32(7)])
        #expect(try await call("Set", [.string(TestObject.interface), .string("Level"), .variant(.uint32(9))], interface: props) == [])
        #expect(state.level.withLock { $0 } == 9)

        func expectError(_ name: String, _ args: [DBusValue], method: String = "Get") async {
            do {
                _ = try await call(method, args, interface: props)
                Issue.record("\(method) \(args) should fail with \(name)")
            } catch let error as DBusError {
                #expect(error.name == name)
            } catch {
                Issue.record("unexpected \(error)")
            }
        }
        await expectError(DBusError.unknownInterface, [.string("org.rig.Nope"), .string("Name")])
        await expectError(DBusError.unknownProperty, [.string(TestObject.interface), .string("Nope")])
        await expectError(DBusError.unknownInterface, [.string("org.rig.Nope")], method: "GetAll")
        await expectError(DBusError.propertyReadOnly, [.string(TestObject.interface), .string("Name"), .variant(.string("x"))], method: "Set")
        await expectError(DBusError.invalidArgs, [.string(TestObject.interface), .string("Level"), .variant(.string("x"))], method: "Set")
        await expectError("org.rig.Error.OutOfRange", [.string(TestObject.interface), .string("Level"), .variant(.uint32(101))], method: "Set")
        await expectError(DBusError.unknownProperty, [.string(TestObject.interface), .string("Nope"), .variant(.uint32(1))], method: "Set")
        #expect(state.level.withLock { $0 } == 9)
    }

    @Test func introspection() async throws {
        let reply = try await call("Introspect", interface: "org.freedesktop.DBus.Introspectable")
        let xml = reply.first?.string ?? ""
        #expect(xml.contains("<interface name=\"org.rig.Test\">"))
        #expect(
            xml.contains(
                "<method name=\"Add\"><arg type=\"i\" direction=\"in\"/><arg type=\"i\" direction=\"in\"/><arg type=\"i\" direction=\"out\"/></method>"))
        #expect(xml.contains("<property name=\"Level\" type=\"u\" access=\"readwrite\"/>"))
        // libdbus answers for the parent path, listing the child.
        let parent = try await pair.client.call(
            destination: pair.server.uniqueName, path: "/org/rig", interface: "org.freedesktop.DBus.Introspectable", method: "Introspect")
        #expect(parent.first?.string?.contains("<node name=\"test\"") == true)
    }

    @Test func getManagedObjectsListsOnlyObjectsBelowTheRoot() async throws {
        let root = DBusObject(path: "/org/rig/app", interfaces: [], isObjectManager: true)
        try await pair.server.export(root)
        try await pair.server.export(
            DBusObject(
                path: "/org/rig/app/service0",
                interfaces: [
                    DBusInterface(
                        "org.bluez.GattService1",
                        properties: [
                            "UUID": .constant(.string("9a43142a-f619-41ff-945d-527023ef5b9d")), "Primary": .constant(.boolean(true)),
                        ])
                ]))
        try await pair.server.export(
            DBusObject(
                path: "/org/rig/app/service0/char0",
                interfaces: [
                    DBusInterface(
                        "org.bluez.GattCharacteristic1",
                        properties: [
                            "Service": .constant(.objectPath("/org/rig/app/service0")), "Flags": .constant(.strings(["read", "notify"])),
                        ])
                ]))
        try await pair.server.export(DBusObject(path: "/org/rig/application", interfaces: [DBusInterface("org.rig.Outside")]))
        let managed = try await pair.client.managedObjects(destination: pair.server.uniqueName, path: "/org/rig/app")
        #expect(Set(managed.objects.keys) == ["/org/rig/app/service0", "/org/rig/app/service0/char0"])
        #expect(managed.objects["/org/rig/app/service0"]?["org.bluez.GattService1"]?["Primary"] == .boolean(true))
        #expect(managed.objects["/org/rig/app/service0/char0"]?["org.bluez.GattCharacteristic1"]?["Flags"]?.strings == ["read", "notify"])
        // Objects that are not managers do not answer GetManagedObjects.
        await #expect(throws: DBusError.self) {
            try await pair.client.managedObjects(destination: pair.server.uniqueName, path: TestObject.path)
        }
    }

    @Test func exportingTwiceAndUnexporting() async throws {
        await #expect(throws: DBusConnectionError.pathInUse(TestObject.path)) { try await pair.server.export(TestObject.make(state)) }
        await #expect(throws: DBusMarshalError.invalidObjectPath("bad")) { try await pair.server.export(DBusObject(path: "bad", interfaces: [])) }
        try await pair.server.unexport(path: TestObject.path)
        do {
            _ = try await call("Echo", [.string("x")])
            Issue.record("an unexported object must not answer")
        } catch let error as DBusError {
            #expect(error.name == DBusError.unknownMethod || error.name == DBusError.unknownObject)
        }
        try await pair.server.export(TestObject.make(state))
        #expect(try await call("Echo", [.string("back")]) == [.string("back")])
    }

    @Test func noReplyCallsGetNoReply() async throws {
        try await pair.client.send(
            destination: pair.server.uniqueName, path: TestObject.path,
            interface: TestObject.interface, method: "Record", args: [.boolean(true)])
        // Messages between two connections stay in order: once Echo is answered, Record was
        // handled, and an (erroneous) reply to it would have arrived before Echo's.
        #expect(try await call("Echo", [.string("sync")]) == [.string("sync")])
        #expect(state.noReplyCalls.withLock { $0 } == [true])
        #expect(try await pair.client.perform { $0.strayReplies } == 0)
        // The same method called normally does reply (with its error).
        await #expect(throws: DBusError.self) { try await call("Record", [.boolean(false)]) }
    }

    @Test func unixFDsPassThroughTheBus() async throws {
        var fds: [Int32] = [-1, -1]
        #expect(pipe(&fds) == 0)
        defer {
            close(fds[0])
            close(fds[1])
        }
        let bytes: [UInt8] = [1, 2, 3]
        #expect(write(fds[1], bytes, bytes.count) == 3)
        #expect(try await call("ReadFD", [.unixFD(DBusUnixFD(fds[0]))]) == [.bytes(bytes)])
    }
}
