import CLinux
import Glibc
import SystemPackage

/// The evdev ioctls, behind a protocol so tests can feed a pipe and fake the device's
/// answers. Each method names the ioctl it wraps; errors are the `Errno` it failed with
/// (`ENODEV` once the device is unplugged).
public protocol EvdevControl: Sendable {
    /// EVIOCGABS(axis): the axis's range and current value.
    func absInfo(_ fd: FileDescriptor, axis: UInt16) throws(Errno) -> AbsInfo
    /// EVIOCGKEY: which keys and buttons are down now, as a bitmap.
    func keyState(_ fd: FileDescriptor, into bitmap: inout EvdevBitmap) throws(Errno)
    /// EVIOCGBIT(type): which codes of event `type` the device reports (type 0: which
    /// event types).
    func eventBits(_ fd: FileDescriptor, type: UInt16, into bitmap: inout EvdevBitmap) throws(Errno)
    /// EVIOCGNAME: the device's name.
    func name(_ fd: FileDescriptor) throws(Errno) -> String
}

/// The real ioctls.
public struct LinuxEvdevControl: EvdevControl {
    public init() {}

    public func absInfo(_ fd: FileDescriptor, axis: UInt16) throws(Errno) -> AbsInfo {
        var info = input_absinfo()
        let result = withUnsafeMutablePointer(to: &info) { rig_ioctl_pointer(fd.rawValue, rig_eviocgabs(UInt32(axis)), $0) }
        guard result >= 0 else { throw Errno(rawValue: errno) }
        return AbsInfo(
            value: info.value, minimum: info.minimum, maximum: info.maximum,
            fuzz: info.fuzz, flat: info.flat, resolution: info.resolution)
    }

    public func keyState(_ fd: FileDescriptor, into bitmap: inout EvdevBitmap) throws(Errno) {
        try bitmap.fill { buffer in rig_ioctl_pointer(fd.rawValue, rig_eviocgkey(UInt32(buffer.count)), buffer.baseAddress) }
    }

    public func eventBits(_ fd: FileDescriptor, type: UInt16, into bitmap: inout EvdevBitmap) throws(Errno) {
        try bitmap.fill { buffer in rig_ioctl_pointer(fd.rawValue, rig_eviocgbit(UInt32(type), UInt32(buffer.count)), buffer.baseAddress) }
    }

    public func name(_ fd: FileDescriptor) throws(Errno) -> String {
        var buffer = [UInt8](repeating: 0, count: 256)
        let result = buffer.withUnsafeMutableBytes { rig_ioctl_pointer(fd.rawValue, rig_eviocgname(UInt32($0.count - 1)), $0.baseAddress) }
        guard result >= 0 else { throw Errno(rawValue: errno) }
        let end = buffer.firstIndex(of: 0) ?? buffer.count
        return String(decoding: buffer[..<end], as: UTF8.self)
    }
}

/// A kernel bit array (EVIOCGBIT, EVIOCGKEY): bit `code` of byte `code / 8`. Allocated
/// once; `fill` reuses the storage.
public struct EvdevBitmap: Sendable, Equatable {
    public private(set) var bytes: [UInt8]

    public init(byteCount: Int) {
        bytes = [UInt8](repeating: 0, count: byteCount)
    }

    /// A bitmap with `codes` set (fakes, tests).
    public init(byteCount: Int, codes: [Int]) {
        self.init(byteCount: byteCount)
        for code in codes { set(code) }
    }

    @inline(__always)
    public func contains(_ code: Int) -> Bool {
        guard code >= 0, code / 8 < bytes.count else { return false }
        return bytes[code / 8] & (1 << UInt8(code % 8)) != 0
    }

    public mutating func set(_ code: Int, _ on: Bool = true) {
        guard code >= 0, code / 8 < bytes.count else { return }
        if on { bytes[code / 8] |= 1 << UInt8(code % 8) } else { bytes[code / 8] &= ~(1 << UInt8(code % 8)) }
    }

    /// Copies `other`'s bytes in place (same size), without allocating.
    @inline(__always)
    public mutating func copy(from other: EvdevBitmap) {
        for i in 0..<min(bytes.count, other.bytes.count) { bytes[i] = other.bytes[i] }
    }

    public mutating func clear() {
        for i in bytes.indices { bytes[i] = 0 }
    }

    /// Zeroes the bitmap and lets `body` (an ioctl) write into its bytes; a negative
    /// result is an error in `errno`.
    public mutating func fill(_ body: (UnsafeMutableRawBufferPointer) -> Int32) throws(Errno) {
        clear()
        let result = bytes.withUnsafeMutableBytes { body($0) }
        guard result >= 0 else { throw Errno(rawValue: errno) }
    }

    /// Every set code, ascending.
    public var codes: [Int] {
        (0..<(bytes.count * 8)).filter { contains($0) }
    }
}
