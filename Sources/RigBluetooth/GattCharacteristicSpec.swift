import RigDBus

/// What a write to a characteristic came with.
public struct GattWrite: Sendable {
    public var value: [UInt8]
    /// The central's object path (`device` option), if BlueZ said.
    public var device: String?
    /// True for a write without response: BlueZ already answered the peer, so an error
    /// returned here reaches nobody.
    public var withoutResponse: Bool
}

/// Why a write was refused (maps to the BlueZ error names a peripheral may return).
public enum GattWriteRefusal: Error, Sendable, Equatable {
    case invalidValueLength(String)
    case notPermitted(String)
    /// The writer is not allowed to write at all (not a paired phone).
    case notAuthorized(String)
    case failed(String)

    /// The D-Bus error name bluetoothd gets.
    public var dbusErrorName: String { dbusError.name }

    var dbusError: DBusError {
        switch self {
        case .invalidValueLength(let m): DBusError("org.bluez.Error.InvalidValueLength", m)
        case .notPermitted(let m): DBusError("org.bluez.Error.NotPermitted", m)
        case .notAuthorized(let m): DBusError("org.bluez.Error.NotAuthorized", m)
        case .failed(let m): DBusError("org.bluez.Error.Failed", m)
        }
    }
}

/// One characteristic of a GATT application: its UUID, flags and handlers.
public struct GattCharacteristicSpec: Sendable {
    public var uuid: String
    /// BlueZ flags: "read", "write", "write-without-response", "notify", "encrypt-write", …
    public var flags: [String]
    /// The current value for ReadValue (and notifications' initial value).
    public var read: (@Sendable () -> [UInt8])?
    /// Validates and applies a write; throw to refuse it (nothing may change then).
    public var write: (@Sendable (GattWrite) throws(GattWriteRefusal) -> Void)?

    public init(
        uuid: String, flags: [String], read: (@Sendable () -> [UInt8])? = nil,
        write: (@Sendable (GattWrite) throws(GattWriteRefusal) -> Void)? = nil
    ) {
        self.uuid = uuid.lowercased()
        self.flags = flags
        self.read = read
        self.write = write
    }
}
