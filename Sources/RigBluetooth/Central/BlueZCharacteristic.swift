import RigDBus

/// A remote GATT characteristic (`org.bluez.GattCharacteristic1`) on a connected device.
public struct BlueZCharacteristic: Sendable {
    public let bus: DBusConnection
    public let path: String
    /// Normalized 128-bit UUID.
    public let uuid: String
    /// `read`, `write`, `write-without-response`, `notify`, …
    public let flags: [String]

    public init(bus: DBusConnection, path: String, uuid: String, flags: [String]) {
        self.bus = bus
        self.path = path
        self.uuid = uuid
        self.flags = flags
    }

    /// How a write travels.
    public enum WriteType: String, Sendable {
        /// ATT Write Request: the peer acknowledges; the call returns after the ack.
        case request
        /// ATT Write Command (write without response): the reply only means "queued".
        case command
    }

    /// `WriteValue(value, {"type": …})`.
    public func write(_ bytes: [UInt8], type: WriteType, timeout: Duration = .seconds(5)) async throws {
        do {
            _ = try await bus.call(
                destination: BlueZ.service, path: path, interface: BlueZ.characteristic,
                method: "WriteValue", args: [.bytes(bytes), .vardict(["type": .string(type.rawValue)])],
                timeout: timeout)
        } catch let error as DBusError {
            throw BlueZCentralError.bluez(operation: "WriteValue on \(path)", message: error.description)
        }
    }

    /// `AcquireWrite({})`: a `SOCK_SEQPACKET` socket where each `write()` becomes one ATT
    /// write command, and the ATT MTU (payload per write = MTU − 3). The caller owns `fd`
    /// and closes it to release the write lock. Nil when BlueZ refuses (not supported, or
    /// the characteristic lacks `write-without-response`).
    public func acquireWrite() async -> (fd: Int32, mtu: Int)? {
        guard
            let reply = try? await bus.call(
                destination: BlueZ.service, path: path, interface: BlueZ.characteristic,
                method: "AcquireWrite", args: [.vardict([:])], expecting: "hq",
                timeout: .seconds(5)),
            let fd = reply[0].unixFD?.rawValue, let mtu = reply[1].uint16
        else { return nil }
        return (fd, Int(mtu))
    }

    /// `StartNotify`; notifications then arrive as `PropertiesChanged` of `Value`
    /// (``notifications()``; subscribe to that first).
    public func startNotify() async throws {
        do {
            _ = try await bus.call(
                destination: BlueZ.service, path: path, interface: BlueZ.characteristic,
                method: "StartNotify", timeout: .seconds(5))
        } catch let error as DBusError {
            throw BlueZCentralError.bluez(operation: "StartNotify on \(path)", message: error.description)
        }
    }

    /// `StopNotify`; errors are ignored.
    public func stopNotify() async {
        _ = try? await bus.call(
            destination: BlueZ.service, path: path, interface: BlueZ.characteristic,
            method: "StopNotify", timeout: .seconds(5))
    }

    /// Every new `Value` the peer notifies, in order. A malformed signal is skipped.
    public func notifications() async throws -> AsyncStream<[UInt8]> {
        let signals = try await bus.signals(
            matching: .propertiesChanged(
                sender: BlueZ.service, path: path,
                interface: BlueZ.characteristic))
        return AsyncStream { continuation in
            let task = Task {
                for await signal in signals {
                    if let change = try? DBusPropertiesChanged(signal), let value = change.changed["Value"]?.bytes {
                        continuation.yield(value)
                    }
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}
