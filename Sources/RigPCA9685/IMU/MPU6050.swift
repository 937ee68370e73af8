import RigCore
import RigFormat
import RigRuntime

/// An MPU-6050 (InvenSense's 6-axis accelerometer and gyro) on the camera, read through
/// the same I2C bus abstraction as the PCA9685 (`I2CBus`, i2c-dev in `LinuxI2CBus`):
/// `start` checks WHO_AM_I, wakes it on the gyro's PLL, sets the sample rate, the
/// low-pass filter and the gyro's range; `readGyro` is one 6-byte block read of
/// GYRO_XOUT_H…GYRO_ZOUT_L (big-endian int16s). Register numbers from the register map
/// (RM-MPU-6000A-00 rev. 4.2). `rig calibrate resonance` reads it once per loop tick.
public final class MPU6050: RateSensor {
    public enum Register {
        public static let SMPLRT_DIV: UInt8 = 0x19
        public static let CONFIG: UInt8 = 0x1A
        public static let GYRO_CONFIG: UInt8 = 0x1B
        public static let GYRO_XOUT_H: UInt8 = 0x43
        public static let PWR_MGMT_1: UInt8 = 0x6B
        public static let WHO_AM_I: UInt8 = 0x75

        public static func name(_ register: UInt8) -> String {
            switch register {
            case SMPLRT_DIV: "SMPLRT_DIV"
            case CONFIG: "CONFIG"
            case GYRO_CONFIG: "GYRO_CONFIG"
            case GYRO_XOUT_H...GYRO_XOUT_H + 5: "GYRO_OUT"
            case PWR_MGMT_1: "PWR_MGMT_1"
            case WHO_AM_I: "WHO_AM_I"
            default: "register 0x\(String(register, radix: 16))"
            }
        }
    }

    /// What WHO_AM_I reads on an MPU-6050 (whatever AD0 is).
    public static let whoAmI: UInt8 = 0x68
    /// PWR_MGMT_1: awake, clock from the X gyro's PLL (more stable than the internal 8 MHz).
    public static let clockPLLX: UInt8 = 0x01

    public let config: MPU6050Config
    private let openBus: () throws(I2CError) -> I2CBus
    private var bus: I2CBus?

    /// The chip on `bus` (a test's model, or a bus the caller opened).
    public init(config: MPU6050Config, bus: I2CBus) {
        self.config = config
        openBus = { bus }
    }

    /// The chip on the rig file's bus, opened by `start`.
    public init(config: MPU6050Config) {
        self.config = config
        openBus = { () throws(I2CError) -> I2CBus in try LinuxI2CBus(path: config.bus) }
    }

    public var componentNames: [String] { ["gyro x", "gyro y", "gyro z"] }

    public var sensorName: String { "the MPU-6050 at 0x\(String(config.address, radix: 16)) on \(config.bus)" }

    /// Opens the bus, checks it is an MPU-6050 and configures it.
    public func configure() throws(MPU6050Error) {
        let bus: I2CBus
        do { bus = try openBus() } catch { throw MPU6050Error(config: config, cause: .bus(error)) }
        let who: UInt8
        do { who = try bus.readByte(address: config.address, register: Register.WHO_AM_I) } catch {
            throw MPU6050Error(config: config, cause: .bus(error))
        }
        guard who == Self.whoAmI else { throw MPU6050Error(config: config, cause: .notMPU6050(whoAmI: who)) }
        do {
            try bus.writeByte(address: config.address, register: Register.PWR_MGMT_1, value: Self.clockPLLX)
            try bus.writeByte(address: config.address, register: Register.SMPLRT_DIV, value: 0)
            try bus.writeByte(address: config.address, register: Register.CONFIG, value: config.filter.dlpfConfig)
            try bus.writeByte(address: config.address, register: Register.GYRO_CONFIG, value: config.range.fsSel << 3)
        } catch {
            throw MPU6050Error(config: config, cause: .bus(error))
        }
        self.bus = bus
    }

    /// The gyro's three rates, degrees per second (x, y, z as the chip's axes are marked).
    public func readGyro() throws(MPU6050Error) -> SIMD3<Double> {
        guard let bus else { throw MPU6050Error(config: config, cause: .notStarted) }
        var raw = (UInt64(0), UInt64(0))
        do {
            try withUnsafeMutableBytes(of: &raw) { (buffer) throws(I2CError) in
                try bus.readBlock(address: config.address, register: Register.GYRO_XOUT_H, into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<6]))
            }
        } catch {
            throw MPU6050Error(config: config, cause: .bus(error))
        }
        return withUnsafeBytes(of: raw) { b in
            let scale = 1 / config.range.countsPerDegreePerSecond
            func value(_ i: Int) -> Double { Double(Int16(bitPattern: UInt16(b[2 * i]) << 8 | UInt16(b[2 * i + 1]))) * scale }
            return SIMD3(value(0), value(1), value(2))
        }
    }

    // MARK: RateSensor

    public func start() throws(PartStartFailure) {
        do { try configure() } catch { throw PartStartFailure(part: "imu", cause: .unavailable, detail: error.description) }
    }

    /// A read that fails is tried once more at once (a flaky bus drops a transfer now and
    /// then): only two failures in a row are a missing reading (which a measured settle
    /// counts as motion, and a ring-down record as a gap).
    public func rates() -> SIMD3<Double>? { (try? readGyro()) ?? (try? readGyro()) }

    public func close() {
        (bus as? LinuxI2CBus)?.close()
        bus = nil
    }
}

/// Why the MPU-6050 could not be used.
public struct MPU6050Error: Error, Sendable, CustomStringConvertible {
    public enum Cause: Sendable, Equatable {
        case bus(I2CError)
        case notMPU6050(whoAmI: UInt8)
        case notStarted
    }
    public var config: MPU6050Config
    public var cause: Cause

    public var description: String {
        let at = "the MPU-6050 at 0x\(String(config.address, radix: 16)) on \(config.bus)"
        switch cause {
        case .bus(let e) where e.operation == .open:
            return "\(at): opening the bus failed: \(e.errnoText) (is i2c-dev loaded and the bus enabled?)"
        case .bus(let e):
            let what: String
            switch e.operation {
            case .read(let r): what = "reading \(MPU6050.Register.name(r))"
            case .write(let r): what = "writing \(MPU6050.Register.name(r))"
            default: what = e.action
            }
            let hint = e.isTransient ? " (does it answer? check its wiring: 3.3 V, GND, SDA, SCL, and AD0 for 0x68/0x69)" : ""
            return "\(at) does not answer: \(what) failed: \(e.errnoText)\(hint)"
        case .notMPU6050(let who):
            return "\(at): WHO_AM_I (0x75) reads 0x\(String(who, radix: 16)), not an MPU-6050's 0x68: another chip is at this address"
        case .notStarted:
            return "\(at) was read before it was configured"
        }
    }
}

/// The rig file's `"imu"` section: an MPU-6050 on the camera, on an I2C bus.
public struct MPU6050Config: Sendable, Equatable {
    /// The gyro's full scale (GYRO_CONFIG FS_SEL).
    public enum Range: Int, Sendable, CaseIterable {
        case dps250 = 250
        case dps500 = 500
        case dps1000 = 1000
        case dps2000 = 2000
        /// FS_SEL: the ranges in the register map's order.
        var fsSel: UInt8 { UInt8(Self.allCases.firstIndex(of: self) ?? 0) }
        /// LSB per °/s (register map 4.19).
        public var countsPerDegreePerSecond: Double {
            switch self {
            case .dps250: 131
            case .dps500: 65.5
            case .dps1000: 32.8
            case .dps2000: 16.4
            }
        }
    }

    /// The digital low-pass filter's gyro bandwidth (CONFIG DLPF_CFG), Hz.
    public enum Filter: Int, Sendable, CaseIterable {
        case hz256 = 256
        case hz188 = 188
        case hz98 = 98
        case hz42 = 42
        case hz20 = 20
        case hz10 = 10
        case hz5 = 5
        /// DLPF_CFG: the bandwidths in the register map's order (0: 256 Hz … 6: 5 Hz).
        var dlpfConfig: UInt8 { UInt8(Self.allCases.firstIndex(of: self) ?? 0) }
    }

    public var bus = "/dev/i2c-1"
    public var address = 0x68
    public var range = Range.dps500
    public var filter = Filter.hz42

    public init(bus: String = "/dev/i2c-1", address: Int = 0x68, range: Range = .dps500, filter: Filter = .hz42) {
        self.bus = bus
        self.address = address
        self.range = range
        self.filter = filter
    }

    /// Reads `"imu": {"bus": 1 | "/dev/i2c-1", "address": "0x68" | 104, "gyroRangeDps": 500, "filterHz": 42}`.
    public static func parse(_ section: ConfigSection) throws(FileError) -> MPU6050Config {
        let object = try section.reader.object()
        var config = MPU6050Config()
        if let bus = object.optional("bus") {
            if case .number = bus.node.value {
                let n = try bus.integer()
                guard (0...255).contains(n) else { throw bus.error("I2C bus \(n) is out of range; valid: 0…255 (or a path like \"/dev/i2c-1\")") }
                config.bus = "/dev/i2c-\(n)"
            } else {
                config.bus = try bus.nonEmptyString(valid: "a bus number (1 for /dev/i2c-1) or a path like \"/dev/i2c-1\"")
            }
        }
        if let address = object.optional("address") {
            let a = try parseI2CAddress(address)
            guard a == 0x68 || a == 0x69 else {
                throw address.error("an MPU-6050 answers at 0x68 (AD0 low) or 0x69 (AD0 high), not 0x\(String(a, radix: 16)); valid: \"0x68\", \"0x69\"")
            }
            config.address = a
        }
        if let range = object.optional("gyroRangeDps") {
            let n = try range.integer()
            guard let r = Range(rawValue: n) else {
                throw range.error("\(n) °/s is not a gyro range of the MPU-6050; valid: \(Range.allCases.map { "\($0.rawValue)" }.joined(separator: ", "))")
            }
            config.range = r
        }
        if let filter = object.optional("filterHz") {
            let n = try filter.integer()
            guard let f = Filter(rawValue: n) else {
                throw filter.error(
                    "\(n) Hz is not a low-pass filter of the MPU-6050; valid: \(Filter.allCases.map { "\($0.rawValue)" }.joined(separator: ", "))")
            }
            config.filter = f
        }
        try object.finish()
        return config
    }
}
