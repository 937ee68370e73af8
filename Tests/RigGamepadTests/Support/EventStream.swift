import CLinux
import RigGamepad

/// Builds evdev byte streams exactly as the kernel writes them: per record a timeval
/// (seconds, microseconds: Int64 each), type u16, code u16, value s32, little-endian.
struct EventStream {
    private(set) var bytes: [UInt8] = []
    private var microseconds: Int64 = 0

    mutating func event(_ type: Int32, _ code: Int32, _ value: Int32) {
        append(type: UInt16(type), code: UInt16(code), value: value)
    }

    mutating func append(type: UInt16, code: UInt16, value: Int32) {
        for (i, x) in [Int64(microseconds / 1_000_000), microseconds % 1_000_000].enumerated() {
            _ = i
            withUnsafeBytes(of: x.littleEndian) { bytes.append(contentsOf: $0) }
        }
        withUnsafeBytes(of: type.littleEndian) { bytes.append(contentsOf: $0) }
        withUnsafeBytes(of: code.littleEndian) { bytes.append(contentsOf: $0) }
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
        microseconds += 1000
    }

    mutating func abs(_ code: Int32, _ value: Int32) { event(EV_ABS, code, value) }
    mutating func key(_ code: Int32, _ down: Bool) { event(EV_KEY, code, down ? 1 : 0) }
    mutating func report() { event(EV_SYN, SYN_REPORT, 0) }
    mutating func dropped() { event(EV_SYN, SYN_DROPPED, 0) }

    /// A press and a release of `code`, each its own packet.
    mutating func tap(_ code: Int32) {
        key(code, true)
        report()
        key(code, false)
        report()
    }

    mutating func take() -> [UInt8] {
        defer { bytes = [] }
        return bytes
    }
}
