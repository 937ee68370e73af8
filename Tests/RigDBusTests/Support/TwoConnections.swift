import Synchronization

@testable import RigDBus

#if canImport(Glibc)
    import RigTestSupport
    import Glibc
#endif

/// A private bus with two connections on it: `server` exports, `client` calls.
final class TwoConnections: Sendable {
    let bus: PrivateBus
    let server: DBusConnection
    let client: DBusConnection

    init() throws {
        bus = try PrivateBus()
        server = try DBusConnection(bus: .address(bus.address))
        client = try DBusConnection(bus: .address(bus.address))
    }

    deinit {
        client.close()
        server.close()
        bus.stop()
    }
}

/// State behind the test object's properties and methods.
final class TestState: Sendable {
    let level = Mutex<UInt32>(7)
    let noReplyCalls = Mutex<[Bool]>([])
    /// Deferred replies a test holds on to (so they are never answered).
    let parked = Mutex<[DBusReply]>([])
}

enum TestObject {
    static let interface = "org.rig.Test"
    static let path = "/org/rig/test"

    static func make(_ state: TestState, path: String = path) -> DBusObject {
        DBusObject(
            path: path,
            interfaces: [
                DBusInterface(
                    interface,
                    methods: [
                        "Echo": DBusMethod(in: "s", out: "s") { call in [call.args[0]] },
                        "Add": DBusMethod(in: "ii", out: "i") { call in
                            [.int32((call.args[0].int32 ?? 0) &+ (call.args[1].int32 ?? 0))]
                        },
                        "Refuse": DBusMethod { _ in throw DBusError("org.bluez.Error.NotPermitted", "refused on purpose") },
                        "WrongReply": DBusMethod(out: "s") { _ in [.int32(1)] },
                        "Record": DBusMethod(in: "b") { call in
                            state.noReplyCalls.withLock { $0.append(call.noReplyExpected) }
                            throw DBusError("org.rig.Error.ShouldNotBeSent", "no-reply calls get no reply, not even an error")
                        },
                        "Later": .deferred(in: "u", out: "u") { call, reply in
                            let value = call.args[0].uint32 ?? 0
                            Task.detached { reply.succeed([.uint32(value * 2)]) }
                        },
                        "Never": .deferred { _, reply in state.parked.withLock { $0.append(reply) } },
                        "ReadFD": DBusMethod(in: "h", out: "ay") { call in
                            guard let fd = call.args[0].unixFD?.rawValue else { throw DBusError(DBusError.invalidArgs) }
                            defer { close(fd) }
                            var buffer = [UInt8](repeating: 0, count: 16)
                            let count = read(fd, &buffer, buffer.count)
                            return [.bytes(Array(buffer.prefix(max(0, count))))]
                        },
                    ],
                    properties: [
                        "Name": .constant(.string("rig")),
                        "Level": DBusProperty(
                            signature: "u", get: { .uint32(state.level.withLock { $0 }) },
                            set: { value in
                                guard let level = value.uint32, level <= 100 else {
                                    throw DBusError("org.rig.Error.OutOfRange", "level must be 0...100")
                                }
                                state.level.withLock { $0 = level }
                            }),
                    ], signals: ["Tick": "u"])
            ])
    }
}
