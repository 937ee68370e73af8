import FoundationEssentials
import Glibc
import RigFormat

/// The Raspberry Pi firmware's power and temperature flags (`get_throttled`): an
/// under-voltage makes servos twitch and SD cards corrupt, a throttled CPU makes the loop
/// late. Read from sysfs; nil on a machine that has none (not a Pi).
public struct PiPowerFlags: Sendable, Equatable {
    public let raw: UInt32

    public init(raw: UInt32) { self.raw = raw }

    public var underVoltageNow: Bool { raw & 0x1 != 0 }
    public var frequencyCappedNow: Bool { raw & 0x2 != 0 }
    public var throttledNow: Bool { raw & 0x4 != 0 }
    public var softTemperatureLimitNow: Bool { raw & 0x8 != 0 }
    public var underVoltageSinceBoot: Bool { raw & 0x1_0000 != 0 }
    public var frequencyCappedSinceBoot: Bool { raw & 0x2_0000 != 0 }
    public var throttledSinceBoot: Bool { raw & 0x4_0000 != 0 }
    public var softTemperatureLimitSinceBoot: Bool { raw & 0x8_0000 != 0 }

    /// What is set, in words ("under-voltage now", "throttled since boot").
    public var problems: [String] {
        var words: [String] = []
        if underVoltageNow { words.append("under-voltage now") } else if underVoltageSinceBoot { words.append("under-voltage since boot") }
        if throttledNow { words.append("throttled now") } else if throttledSinceBoot { words.append("throttled since boot") }
        if frequencyCappedNow { words.append("CPU frequency capped now") } else if frequencyCappedSinceBoot { words.append("CPU frequency capped since boot") }
        if softTemperatureLimitNow {
            words.append("soft temperature limit now")
        } else if softTemperatureLimitSinceBoot {
            words.append("soft temperature limit since boot")
        }
        return words
    }

    /// Where the Raspberry Pi kernel exposes the flags.
    public static let sysfsPath = "/sys/devices/platform/soc/soc:firmware/get_throttled"

    /// The flags from `path` (hex, with or without `0x`, as the firmware driver writes
    /// them); nil when the file is missing or unreadable.
    public static func read(path: String = sysfsPath) -> PiPowerFlags? {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        var digits = text.trimmed()
        if digits.hasPrefix("throttled=") { digits.removeFirst("throttled=".count) }
        if digits.hasPrefix("0x") || digits.hasPrefix("0X") { digits.removeFirst(2) }
        return UInt32(digits, radix: 16).map(PiPowerFlags.init)
    }
}

/// Who may open a device node: the checks `rig doctor` makes for the account the service
/// runs as, without being that account.
public struct DeviceAccess: Sendable, Equatable {
    /// A user and the groups it is in.
    public struct Account: Sendable, Equatable {
        public var name: String
        public var uid: uid_t
        public var gids: [gid_t]

        public init(name: String, uid: uid_t, gids: [gid_t]) {
            self.name = name
            self.uid = uid
            self.gids = gids
        }

        /// The account `name` from the user database, with every group it is in; nil when
        /// there is no such user.
        public static func named(_ name: String) -> Account? {
            guard let entry = getpwnam(name) else { return nil }
            let uid = entry.pointee.pw_uid
            let primary = entry.pointee.pw_gid
            var count: Int32 = 64
            var groups = [gid_t](repeating: 0, count: Int(count))
            if getgrouplist(name, primary, &groups, &count) < 0 {
                groups = [gid_t](repeating: 0, count: Int(count))
                _ = getgrouplist(name, primary, &groups, &count)
            }
            return Account(name: name, uid: uid, gids: Array(groups.prefix(Int(max(count, 0)))))
        }

        /// The process's own user and groups.
        public static var current: Account {
            let uid = getuid()
            let name = getpwuid(uid).map { String(cString: $0.pointee.pw_name) } ?? "uid \(uid)"
            var groups = [gid_t](repeating: 0, count: Int(getgroups(0, nil)))
            let n = getgroups(Int32(groups.count), &groups)
            return Account(name: name, uid: uid, gids: Array(groups.prefix(Int(max(n, 0)))) + [getgid()])
        }
    }

    public var path: String
    public var ownerUID: uid_t
    public var groupGID: gid_t
    public var mode: mode_t

    /// The node's owner, group and permission bits; nil when it cannot be looked at.
    public static func of(_ path: String) -> DeviceAccess? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return DeviceAccess(path: path, ownerUID: info.st_uid, groupGID: info.st_gid, mode: info.st_mode & 0o777)
    }

    /// True when `account` may read and write the node by its permission bits (root
    /// always may). ACLs (a desktop's seat rules) are not looked at: a service has no seat.
    public func allowsReadWrite(for account: Account) -> Bool {
        if account.uid == 0 { return true }
        let bits: mode_t
        if account.uid == ownerUID {
            bits = (mode >> 6) & 0o7
        } else if account.gids.contains(groupGID) {
            bits = (mode >> 3) & 0o7
        } else {
            bits = mode & 0o7
        }
        return bits & 0o6 == 0o6
    }

    /// The node's group by name ("plugdev"), or its number.
    public var groupName: String {
        getgrgid(groupGID).map { String(cString: $0.pointee.gr_name) } ?? "\(groupGID)"
    }

    /// libgphoto2's USB port ("usb:001,004") as the device node it names
    /// (`/dev/bus/usb/001/004`); nil for any other port.
    public static func usbNode(port: String) -> String? {
        guard port.hasPrefix("usb:") else { return nil }
        let parts = port.dropFirst(4).split(separator: ",")
        guard parts.count == 2, let bus = Int(parts[0]), let device = Int(parts[1]), bus > 0, device > 0 else { return nil }
        return "/dev/bus/usb/\(zeroPadded(bus, 3))/\(zeroPadded(device, 3))"
    }
}
