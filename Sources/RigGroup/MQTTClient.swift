import CMosquitto
import Dispatch
import FoundationEssentials
import RigRuntime
import Synchronization

/// Where the group's broker is: `mqtt://host:port` (plain) or `mqtts://host:port` (TLS,
/// with the CA from the credentials). Credentials never come from the URL.
public struct BrokerAddress: Sendable, Equatable, CustomStringConvertible {
    public var host: String
    public var port: Int
    public var tls: Bool

    public init(host: String, port: Int, tls: Bool = false) {
        self.host = host
        self.port = port
        self.tls = tls
    }

    /// Parses `mqtt://host[:port]` or `mqtts://host[:port]`; a message saying what is
    /// valid otherwise.
    public static func parse(_ text: String) -> Result<BrokerAddress, GroupSetupError> {
        let tls: Bool
        let rest: Substring
        if text.hasPrefix("mqtt://") {
            tls = false
            rest = text.dropFirst("mqtt://".count)
        } else if text.hasPrefix("mqtts://") {
            tls = true
            rest = text.dropFirst("mqtts://".count)
        } else {
            return .failure(GroupSetupError("\"\(text)\" is not a broker address; valid: mqtt://HOST:PORT or mqtts://HOST:PORT"))
        }
        if rest.contains("@") {
            return .failure(
                GroupSetupError(
                    "\(text): credentials do not go in the address (they would show in `ps`); put them in the rig file's \"group\" section or a 0600 file"))
        }
        var host = String(rest)
        var port = tls ? 8883 : 1883
        if let colon = rest.lastIndex(of: ":"), !rest.hasPrefix("[") || rest[..<colon].hasSuffix("]") {
            guard let p = Int(rest[rest.index(after: colon)...]), (1...65535).contains(p) else {
                return .failure(GroupSetupError("\(text): the port must be a number 1…65535"))
            }
            port = p
            host = String(rest[..<colon])
        }
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty, !host.contains("/") else { return .failure(GroupSetupError("\(text): no host; valid: mqtt://HOST:PORT")) }
        return .success(BrokerAddress(host: host, port: port, tls: tls))
    }

    public var description: String { "\(tls ? "mqtts" : "mqtt")://\(host.contains(":") ? "[\(host)]" : host):\(port)" }
}

/// The broker's user and password, and the CA that signs its TLS certificate.
public struct BrokerCredentials: Sendable, Equatable {
    public var username: String?
    public var password: String?
    public var caFile: String?

    public init(username: String? = nil, password: String? = nil, caFile: String? = nil) {
        self.username = username
        self.password = password
        self.caFile = caFile
    }
}

/// A group setting or link that cannot be used, said for a person.
public struct GroupSetupError: Error, Sendable, Equatable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// One MQTT 5 connection through Debian's libmosquitto: its own network thread
/// (`mosquitto_loop_start`) connects, reconnects after a lost broker (every second or
/// two) and subscribes again each time; every call here returns at once (a publish is
/// queued for that thread; QoS 1). What arrives is handed to `onEvent` on that thread.
public final class MQTTClient: @unchecked Sendable {
    public struct Message: Sendable, Equatable {
        public var topic: String
        public var payload: [UInt8]
        public var retained: Bool
        /// The message expiry left when it reached us (MQTT 5), if it has one.
        public var expirySeconds: UInt32?
    }

    public enum Event: Sendable, Equatable {
        case connected
        /// The broker is gone (or refused us: `reason` says why); the client tries again.
        case disconnected(reason: String)
        case message(Message)
    }

    /// A message the broker publishes for us when we vanish (MQTT's will).
    public struct Will: Sendable {
        public var topic: String
        public var payload: [UInt8]
        public var retain: Bool
        public init(topic: String, payload: [UInt8], retain: Bool) {
            self.topic = topic
            self.payload = payload
            self.retain = retain
        }
    }

    private let handle: OpaquePointer
    private let address: BrokerAddress
    private let onEvent: @Sendable (Event) -> Void
    private let subscriptions = Mutex<[String]>([])
    private let state = Mutex<(started: Bool, closed: Bool)>((false, false))
    /// QoS 1 messages queued and acknowledged by the broker (PUBACK), and whether it is
    /// connected: `close` lets what was published go out first.
    private let flow = Mutex<(published: Int, acknowledged: Int, connected: Bool)>((0, 0, false))
    /// `close` asked for the DISCONNECT (from the network thread, on the broker's last
    /// UNSUBACK: `unanswered` counts them down), and whether it was sent: once.
    private let closing = Mutex<(asked: Bool, unanswered: Int, sent: Bool)>((false, 0, false))

    private static let libraryReady: Bool = { mosquitto_lib_init() == MOSQ_ERR_SUCCESS.rawValue }()

    public init(
        clientID: String, address: BrokerAddress, credentials: BrokerCredentials, will: Will?, onEvent: @escaping @Sendable (Event) -> Void
    ) throws(GroupSetupError) {
        guard Self.libraryReady else { throw GroupSetupError("libmosquitto could not start") }
        guard let handle = mosquitto_new(clientID, true, nil) else { throw GroupSetupError("libmosquitto: no client (out of memory?)") }
        self.handle = handle
        self.address = address
        self.onEvent = onEvent
        func check(_ rc: Int32, _ what: String) throws(GroupSetupError) {
            guard rc == MOSQ_ERR_SUCCESS.rawValue else {
                mosquitto_destroy(handle)
                throw GroupSetupError("\(what): \(String(cString: mosquitto_strerror(rc)))")
            }
        }
        try check(mosquitto_int_option(handle, MOSQ_OPT_PROTOCOL_VERSION, Int32(MQTT_PROTOCOL_V5)), "MQTT 5")
        if credentials.username != nil || credentials.password != nil {
            try check(mosquitto_username_pw_set(handle, credentials.username, credentials.password), "broker user")
        }
        if address.tls {
            guard let ca = credentials.caFile else {
                mosquitto_destroy(handle)
                throw GroupSetupError("\(address): TLS needs the CA that signs the broker's certificate (\"caFile\" in the group's credentials)")
            }
            try check(mosquitto_tls_set(handle, ca, nil, nil, nil, nil), "TLS CA \(ca)")
        }
        if let will {
            try check(
                will.payload.withUnsafeBytes { mosquitto_will_set_v5(handle, will.topic, Int32($0.count), $0.baseAddress, 1, will.retain, nil) },
                "will message")
        }
        mosquitto_reconnect_delay_set(handle, 1, 2, false)
        mosquitto_user_data_set(handle, Unmanaged.passUnretained(self).toOpaque())
        mosquitto_connect_v5_callback_set(handle) { _, object, rc, _, _ in
            guard let object else { return }
            Unmanaged<MQTTClient>.fromOpaque(object).takeUnretainedValue().connected(rc)
        }
        mosquitto_disconnect_v5_callback_set(handle) { _, object, rc, _ in
            guard let object else { return }
            let reason = rc == 0 ? "disconnected" : String(cString: mosquitto_reason_string(rc))
            let client = Unmanaged<MQTTClient>.fromOpaque(object).takeUnretainedValue()
            client.flow.withLock { $0.connected = false }
            client.onEvent(.disconnected(reason: reason))
        }
        mosquitto_publish_v5_callback_set(handle) { _, object, _, _, _ in
            guard let object else { return }
            Unmanaged<MQTTClient>.fromOpaque(object).takeUnretainedValue().flow.withLock { $0.acknowledged += 1 }
        }
        mosquitto_unsubscribe_v5_callback_set(handle) { mosq, object, _, _ in
            guard let mosq, let object else { return }
            // On the network thread itself: the DISCONNECT goes out after what it owes the broker.
            if Unmanaged<MQTTClient>.fromOpaque(object).takeUnretainedValue().takeDisconnect(answer: true) { mosquitto_disconnect_v5(mosq, 0, nil) }
        }
        mosquitto_message_v5_callback_set(handle) { _, object, message, properties in
            guard let object, let message else { return }
            Unmanaged<MQTTClient>.fromOpaque(object).takeUnretainedValue().received(message.pointee, properties)
        }
    }

    deinit {
        close()
        mosquitto_destroy(handle)
    }

    /// Starts the network thread and the first connection attempt; a broker that is not
    /// there yet is tried again until it is (`.connected` then comes).
    public func start(keepAliveSeconds: Int32 = 5) throws(GroupSetupError) {
        guard
            state.withLock({ s in
                defer { s.started = true }
                return !s.started && !s.closed
            })
        else { return }
        let rc = mosquitto_connect_async(handle, address.host, Int32(address.port), keepAliveSeconds)
        // A refused first attempt (no broker yet) is retried by the loop thread.
        if rc != MOSQ_ERR_SUCCESS.rawValue && rc != MOSQ_ERR_ERRNO.rawValue && rc != MOSQ_ERR_NO_CONN.rawValue {
            throw GroupSetupError("broker \(address): \(String(cString: mosquitto_strerror(rc)))")
        }
        let loop = mosquitto_loop_start(handle)
        guard loop == MOSQ_ERR_SUCCESS.rawValue else {
            throw GroupSetupError("libmosquitto's network thread: \(String(cString: mosquitto_strerror(loop)))")
        }
    }

    /// Subscribes now (if connected) and after every reconnect.
    public func subscribe(_ filter: String) {
        subscriptions.withLock { $0.append(filter) }
        _ = mosquitto_subscribe_v5(handle, nil, filter, 1, 0, nil)
    }

    /// Queues a QoS 1 message; `expirySeconds` sets MQTT 5's message expiry (the broker
    /// drops it once that long has passed). False when it could not even be queued.
    @discardableResult
    public func publish(_ topic: String, _ payload: [UInt8], retain: Bool = false, expirySeconds: UInt32? = nil) -> Bool {
        if state.withLock({ $0.closed }) { return false }
        var properties: OpaquePointer?
        defer { mosquitto_property_free_all(&properties) }
        if let expirySeconds {
            _ = mosquitto_property_add_int32(&properties, Int32(MQTT_PROP_MESSAGE_EXPIRY_INTERVAL.rawValue), expirySeconds)
        }
        let rc = payload.withUnsafeBytes { mosquitto_publish_v5(handle, nil, topic, Int32($0.count), $0.baseAddress, 1, retain, properties) }
        guard rc == MOSQ_ERR_SUCCESS.rawValue else { return false }
        flow.withLock { $0.published += 1 }
        return true
    }

    /// Disconnects cleanly (no will) and stops the network thread; waits at most for the
    /// thread to see it. Idempotent.
    ///
    /// libmosquitto 2.0 loses a DISCONNECT asked for from another thread while its network
    /// thread has packets to send (the broker logs "closed its connection" or "disconnected
    /// due to out of memory" and publishes the will), and the messages with it. So, while
    /// connected, what was published goes out first (acknowledged; at most `flushSeconds`),
    /// then the DISCONNECT is asked for on the network thread itself, when the broker
    /// answers an UNSUBSCRIBE (at most `flushSeconds` more; else from here).
    public func close(flushSeconds: Double = 2) {
        let wasStarted: Bool = state.withLock { s in
            defer { s.closed = true }
            return s.started && !s.closed
        }
        guard wasStarted else { return }
        func waitWhile(_ condition: () -> Bool) {
            let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(max(0, flushSeconds) * 1e9)
            while condition(), DispatchTime.now().uptimeNanoseconds < deadline { SystemThread.sleep(seconds: 0.002) }
        }
        waitWhile { flow.withLock { $0.connected && $0.acknowledged < $0.published } }
        if flow.withLock({ $0.connected }) {
            // Every filter (nothing more arrives after the last answer), or one never
            // subscribed to (answered too).
            let filters = subscriptions.withLock { $0.isEmpty ? ["rig/-/close"] : $0 }
            closing.withLock { $0 = (true, filters.count, false) }
            for filter in filters { _ = mosquitto_unsubscribe_v5(handle, nil, filter, nil) }
            waitWhile { flow.withLock { $0.connected } && !closing.withLock { $0.sent } }
        }
        if takeDisconnect(answer: false) { mosquitto_disconnect_v5(handle, 0, nil) }
        mosquitto_loop_stop(handle, false)
    }

    /// True once: for the network thread on the last answer `close` waits for (`answer`),
    /// or for `close`.
    private func takeDisconnect(answer: Bool) -> Bool {
        closing.withLock { c in
            if answer {
                guard c.asked else { return false }
                c.unanswered -= 1
                guard c.unanswered <= 0 else { return false }
            }
            guard !c.sent else { return false }
            c.sent = true
            return true
        }
    }

    private func connected(_ rc: Int32) {
        guard rc == 0 else {
            onEvent(.disconnected(reason: "refused: \(String(cString: mosquitto_reason_string(rc)))"))
            return
        }
        for filter in subscriptions.withLock({ $0 }) { _ = mosquitto_subscribe_v5(handle, nil, filter, 1, 0, nil) }
        // A new connection's account: what was queued before it is acknowledged or gone.
        flow.withLock { $0 = (0, 0, true) }
        onEvent(.connected)
    }

    private func received(_ message: mosquitto_message, _ properties: OpaquePointer?) {
        guard let topicPointer = message.topic else { return }
        var payload: [UInt8] = []
        if let bytes = message.payload, message.payloadlen > 0 {
            payload = Array(UnsafeRawBufferPointer(start: bytes, count: Int(message.payloadlen)))
        }
        var expiry: UInt32 = 0
        let hasExpiry = mosquitto_property_read_int32(properties, Int32(MQTT_PROP_MESSAGE_EXPIRY_INTERVAL.rawValue), &expiry, false) != nil
        onEvent(.message(Message(topic: String(cString: topicPointer), payload: payload, retained: message.retain, expirySeconds: hasExpiry ? expiry : nil)))
    }
}
