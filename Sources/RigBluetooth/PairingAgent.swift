import RigDBus

/// A BlueZ pairing agent (`org.bluez.Agent1`) for a headless rig, registered as the default
/// agent through `AgentManager1`. Its capability is `DisplayOnly`: a phone (a keyboard and a
/// display) pairing with it gets passkey entry, so the bond is authenticated (MITM-protected)
/// — what the Cascable characteristics' `encrypt-authenticated-write` asks for. The passkey
/// is handed to `onPasskey` to print. Every request a display-only accessory cannot answer
/// honestly (a PIN or passkey to type, a yes/no, Just Works authorisation, a service) is
/// refused with `org.bluez.Error.Rejected`, and reported through `onRefused`.
public struct PairingAgent: Sendable {
    public static let capability = "DisplayOnly"
    public let path: String
    private let bus: DBusConnection
    private let onPasskey: @Sendable (_ device: String, _ passkey: UInt32) -> Void
    private let onRefused: @Sendable (_ device: String?, _ request: String) -> Void

    public init(
        bus: DBusConnection, path: String = "/org/rig/agent",
        onPasskey: @escaping @Sendable (String, UInt32) -> Void,
        onRefused: @escaping @Sendable (String?, String) -> Void
    ) {
        self.bus = bus
        self.path = path
        self.onPasskey = onPasskey
        self.onRefused = onRefused
    }

    /// Exports the agent and makes it bluetoothd's default agent.
    public func register() async throws {
        let onPasskey = self.onPasskey
        let onRefused = self.onRefused
        func refuse(_ request: String, in signature: String, out: String = "") -> DBusMethod {
            DBusMethod(in: signature, out: out) { call in
                onRefused(call.args.first?.string, request)
                throw DBusError("org.bluez.Error.Rejected", "a display-only rig cannot answer \(request)")
            }
        }
        try await bus.export(
            DBusObject(
                path: path,
                interfaces: [
                    DBusInterface(
                        "org.bluez.Agent1",
                        methods: [
                            "Release": DBusMethod { _ in [] },
                            "Cancel": DBusMethod { _ in
                                onRefused(nil, "the pairing was cancelled")
                                return []
                            },
                            "DisplayPasskey": DBusMethod(in: "ouq") { call in
                                if let device = call.args[0].string, case .uint32(let passkey) = call.args[1] {
                                    onPasskey(device, passkey)
                                }
                                return []
                            },
                            "DisplayPinCode": refuse("a PIN code (classic pairing)", in: "os"),
                            "RequestPinCode": refuse("a PIN code to type", in: "o", out: "s"),
                            "RequestPasskey": refuse("a passkey to type", in: "o", out: "u"),
                            "RequestConfirmation": refuse("a yes/no confirmation", in: "ou"),
                            "RequestAuthorization": refuse(
                                "Just Works pairing (no passkey: the bond would not be authenticated)", in: "o"),
                            "AuthorizeService": refuse("a service authorisation", in: "os"),
                        ])
                ]))
        try await agentManager("RegisterAgent", [.objectPath(path), .string(Self.capability)])
        try await agentManager("RequestDefaultAgent", [.objectPath(path)])
    }

    /// `AgentManager1.UnregisterAgent`; errors (bluetoothd gone) are ignored.
    public func unregister() async {
        try? await agentManager("UnregisterAgent", [.objectPath(path)])
        try? await bus.unexport(path: path)
    }

    private func agentManager(_ method: String, _ args: [DBusValue]) async throws {
        do {
            _ = try await bus.call(
                destination: BlueZ.service, path: "/org/bluez", interface: "org.bluez.AgentManager1",
                method: method, args: args, timeout: .seconds(10))
        } catch let error as DBusError {
            throw BlueZCentralError.bluez(operation: "AgentManager1.\(method)", message: error.description)
        }
    }
}
