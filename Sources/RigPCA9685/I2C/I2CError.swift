import SystemPackage

/// An I2C transfer, or opening the bus, failed: which bus, address, operation and errno.
public struct I2CError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What was being done.
    public enum Operation: Sendable, Equatable {
        /// `open(2)` of the bus device.
        case open
        /// `ioctl(I2C_SLAVE)`: claiming the address.
        case selectAddress
        /// A register write (byte or block).
        case write(register: UInt8)
        /// A register read.
        case read(register: UInt8)
        /// A probe transfer (quick write or receive byte).
        case probe
    }

    public var errno: Errno
    public var operation: Operation
    public var bus: String
    /// The 7-bit address, if the operation had one.
    public var address: Int?

    public init(errno: Errno, operation: Operation, bus: String, address: Int?) {
        self.errno = errno
        self.operation = operation
        self.bus = bus
        self.address = address
    }

    /// Whether retrying can help: the errors the kernel's I2C fault codes use for a
    /// transfer that failed on the wire (Documentation/i2c/fault-codes.rst): EIO (generic),
    /// EREMOTEIO and ENXIO (no ACK — bcm2835 says EREMOTEIO), ETIMEDOUT (clock stretched
    /// too long, bus stuck), EAGAIN (arbitration lost).
    public var isTransient: Bool {
        switch errno {
        case .ioError, .noSuchAddressOrDevice, .timedOut, .resourceTemporarilyUnavailable: true
        default: errno.rawValue == remoteIOErrnoValue
        }
    }

    /// The errno's symbolic name and text: "EREMOTEIO (Remote I/O error)".
    public var errnoText: String {
        "\(errnoName(errno)) (\(errno.description))"
    }

    /// What was being done, without the target: "writing LED0_ON_L".
    public var action: String {
        switch operation {
        case .open: "opening the bus"
        case .selectAddress: "selecting the address (ioctl I2C_SLAVE)"
        case .write(let register): "writing \(PCA9685Register.name(register))"
        case .read(let register): "reading \(PCA9685Register.name(register))"
        case .probe: "probing"
        }
    }

    public var description: String {
        let target = address.map { " at 0x\(String($0, radix: 16))" } ?? ""
        return "\(action)\(target) on \(bus) failed: \(errnoText)"
    }
}
