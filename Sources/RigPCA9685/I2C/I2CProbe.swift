import FoundationEssentials
import Glibc

/// Finds I2C buses and what answers on them, like `i2cdetect`, and checks a PCA9685.
/// This is what `rig probe i2c` shows.
public enum I2CProbe {
    /// What one address did when probed.
    public enum AddressState: Sendable, Equatable {
        /// Something acknowledged it.
        case responding
        /// A kernel driver owns it (`i2cdetect`'s "UU"): `ioctl(I2C_SLAVE)` said EBUSY.
        case inUseByDriver
    }

    /// One address that is not empty.
    public struct Finding: Sendable, Equatable {
        public var address: Int
        public var state: AddressState
    }

    /// How an address is probed: `i2cdetect -y`'s automatic choice.
    public enum Method: Sendable, Equatable {
        /// SMBus quick write (the address alone).
        case quickWrite
        /// SMBus receive byte: for 0x30–0x37 and 0x50–0x5F, where a quick write can
        /// corrupt some EEPROMs (a quick write is a one-bit write command to them).
        case receiveByte
    }

    /// The addresses scanned: 0x03…0x77, the 7-bit range outside reserved addresses.
    public static let scanRange: ClosedRange<Int> = 0x03...0x77

    /// The method `i2cdetect` uses for `address` in its automatic mode.
    public static func method(for address: Int) -> Method {
        (0x30...0x37).contains(address) || (0x50...0x5F).contains(address) ? .receiveByte : .quickWrite
    }

    /// The I2C bus devices present (`/dev/i2c-*`), sorted by bus number.
    public static func busPaths(deviceDirectory: String = "/dev") -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: deviceDirectory)) ?? []
        let buses = names.compactMap { name -> (Int, String)? in
            guard name.hasPrefix("i2c-"), let number = Int(name.dropFirst(4)) else { return nil }
            return (number, deviceDirectory + "/" + name)
        }
        return buses.sorted { $0.0 < $1.0 }.map(\.1)
    }

    /// Probes every address in `addresses` and lists those that are not empty. An address
    /// whose probe fails (no ACK: ENXIO, EREMOTEIO; or EIO, ETIMEDOUT) is empty, as in
    /// `i2cdetect`; an adapter without quick-write support (EOPNOTSUPP) is probed by
    /// receive byte instead. Claiming an address that a kernel driver owns (EBUSY) lists it
    /// as ``AddressState/inUseByDriver``; any other failure to claim one means the device is
    /// not a usable I2C bus and is thrown.
    public static func scan(bus: any I2CBus, addresses: ClosedRange<Int> = scanRange) throws(I2CError) -> [Finding] {
        var findings: [Finding] = []
        for address in addresses {
            do {
                switch method(for: address) {
                case .quickWrite:
                    do { try bus.quickWrite(address: address) } catch  where error.operation == .probe && isUnsupported(error) {
                        _ = try bus.receiveByte(address: address)
                    }
                case .receiveByte:
                    _ = try bus.receiveByte(address: address)
                }
                findings.append(Finding(address: address, state: .responding))
            } catch  where error.operation == .selectAddress {
                guard error.errno == .resourceBusy else { throw error }
                findings.append(Finding(address: address, state: .inUseByDriver))
            } catch {
                continue  // nothing there
            }
        }
        return findings
    }

    /// One bus's scan: what answered, or why the bus could not be scanned.
    public struct BusScan: Sendable, Equatable {
        public var path: String
        public var findings: [Finding]
        /// Opening or using the bus failed (EACCES: not in the i2c group; ENOTTY: not an
        /// I2C bus).
        public var error: I2CError?
    }

    /// Opens every `/dev/i2c-*` bus and scans it: what `rig probe i2c` lists.
    public static func scanAllBuses(deviceDirectory: String = "/dev") -> [BusScan] {
        busPaths(deviceDirectory: deviceDirectory).map { path in
            do throws(I2CError) {
                let bus = try LinuxI2CBus(path: path)
                return BusScan(path: path, findings: try scan(bus: bus), error: nil)
            } catch {
                return BusScan(path: path, findings: [], error: error)
            }
        }
    }

    private static func isUnsupported(_ error: I2CError) -> Bool {
        error.errno == .notSupported || error.errno == .notSupportedOnSocket
    }

    /// Reads MODE1 and PRE_SCALE of a PCA9685 at `address` and says what state it is in.
    public static func checkPCA9685(bus: any I2CBus, address: Int) throws(I2CError) -> PCA9685ProbeReport {
        let mode1 = try bus.readByte(address: address, register: PCA9685Register.mode1)
        let prescale = try bus.readByte(address: address, register: PCA9685Register.preScale)
        return PCA9685ProbeReport(address: address, mode1: PCA9685Mode1(rawValue: mode1), prescale: prescale)
    }
}
