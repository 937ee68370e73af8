import Foundation
import RigTestSupport
import Testing

@testable import RigDBus

/// Tier 2: calls that fail, time out, or outlive their connection.
@Suite struct ConnectionTests {
    @Test func callToAMissingServiceFailsWithServiceUnknown() async throws {
        let pair = try TwoConnections()
        do {
            _ = try await pair.client.call(destination: "org.rig.Missing", path: "/", interface: "org.rig.Missing", method: "Nothing")
            Issue.record("a call to a missing service must fail")
        } catch let error as DBusError {
            #expect(error.name == DBusError.serviceUnknown)
        }
        #expect(try await pair.client.nameHasOwner("org.rig.Missing") == false)
    }

    @Test func aCallThatIsNeverAnsweredTimesOut() async throws {
        let pair = try TwoConnections()
        let state = TestState()
        try await pair.server.export(TestObject.make(state))
        do {
            _ = try await pair.client.call(
                destination: pair.server.uniqueName, path: TestObject.path,
                interface: TestObject.interface, method: "Never", timeout: .milliseconds(200))
            Issue.record("an unanswered call must time out")
        } catch let error as DBusError {
            #expect(error.isTimeout)
        }
        // The server's bus thread was never blocked: it still answers.
        let echo = try await pair.client.call(
            destination: pair.server.uniqueName, path: TestObject.path,
            interface: TestObject.interface, method: "Echo", args: [.string("alive")])
        #expect(echo == [.string("alive")])
        #expect(state.parked.withLock { $0.count } == 1)
    }

    @Test func cancellingTheTaskCancelsThePendingCall() async throws {
        let pair = try TwoConnections()
        let state = TestState()
        try await pair.server.export(TestObject.make(state))
        let client = pair.client
        let server = pair.server.uniqueName
        let pending = Task {
            try await client.call(
                destination: server, path: TestObject.path, interface: TestObject.interface,
                method: "Never", timeout: .seconds(60))
        }
        try await withDeadline {
            while state.parked.withLock({ $0.isEmpty }) {
                _ = try await client.call(
                    destination: server, path: TestObject.path, interface: TestObject.interface,
                    method: "Echo", args: [.string("x")])
            }
        }
        pending.cancel()
        await #expect(throws: CancellationError.self) { try await pending.value }
        #expect(try await client.perform { $0.calls.count } == 0)
        // A task cancelled before its call starts never sends it.
        let early = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await client.call(
                destination: server, path: TestObject.path, interface: TestObject.interface,
                method: "Never")
        }
        await #expect(throws: CancellationError.self) { try await early.value }
        #expect(
            try await client.call(
                destination: server, path: TestObject.path, interface: TestObject.interface,
                method: "Echo", args: [.string("y")]) == [.string("y")])
        #expect(state.parked.withLock { $0.count } == 1)
    }

    @Test func closingFailsPendingAndLaterCalls() async throws {
        let pair = try TwoConnections()
        let state = TestState()
        try await pair.server.export(TestObject.make(state))
        let client = pair.client
        let server = pair.server.uniqueName
        let pending = Task {
            try await client.call(
                destination: server, path: TestObject.path, interface: TestObject.interface,
                method: "Never", timeout: .seconds(60))
        }
        // Wait until the server holds the call, so the close really races a pending call.
        try await withDeadline {
            while state.parked.withLock({ $0.isEmpty }) {
                _ = try await client.call(
                    destination: server, path: TestObject.path, interface: TestObject.interface,
                    method: "Echo", args: [.string("x")])
            }
        }
        client.close()
        await #expect(throws: DBusConnectionError.closed) { try await pending.value }
        await #expect(throws: DBusConnectionError.closed) {
            try await client.call(destination: server, path: "/", interface: nil, method: "Ping")
        }
        await #expect(throws: DBusConnectionError.closed) { try await client.emitSignal(path: "/", interface: "org.rig.X", member: "Y") }
    }

    @Test func lostBusFailsCallsWithoutKillingTheProcess() async throws {
        let bus = try PrivateBus()
        let connection = try DBusConnection(bus: .address(bus.address))
        let stream = try await connection.signals(matching: DBusMatchRule(interface: "org.rig.Nothing"))
        bus.stop()
        // The stream finishes once the bus thread sees the disconnect.
        try await withDeadline {
            for await _ in stream {}
        }
        do {
            _ = try await connection.call(
                destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                interface: "org.freedesktop.DBus.Peer", method: "Ping")
            Issue.record("a call on a lost connection must fail")
        } catch is DBusConnectionError {
        } catch let error as DBusError {
            #expect(error.name == DBusError.disconnected || error.name == DBusError.noReply)
        }
        connection.close()
    }

    @Test func connectingToANonexistentBusIsATypedError() {
        #expect(throws: DBusConnectionError.self) {
            try DBusConnection(bus: .address("unix:path=/nonexistent/rig-test-bus"))
        }
        #expect(throws: DBusConnectionError.self) { try DBusConnection(bus: .address("not an address")) }
    }

    @Test func invalidArgumentsAreThrownBeforeAnythingIsSent() async throws {
        let pair = try TwoConnections()
        await #expect(throws: DBusMarshalError.invalidObjectPath("nope")) {
            try await pair.client.call(destination: "org.rig.X", path: "nope", interface: nil, method: "M")
        }
        await #expect(throws: DBusMarshalError.invalidString("a\u{0}")) {
            try await pair.client.call(destination: "org.rig.X", path: "/", interface: nil, method: "M", args: [.string("a\u{0}")])
        }
        await #expect(throws: DBusMarshalError.self) {
            try await pair.client.emitSignal(path: "/", interface: "bad", member: "M")
        }
        await #expect(throws: DBusMarshalError.self) {
            try await pair.client.signals(matching: DBusMatchRule(path: "bad path"))
        }
    }
}
