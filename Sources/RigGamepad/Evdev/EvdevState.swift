/// What an evdev device reports as of its last complete packet: every absolute axis's
/// value and every key's state. Sized once; updates never allocate.
public struct EvdevState: Sendable, Equatable {
    /// Indexed by ABS_* code.
    public private(set) var absValues: [Int32]
    /// Indexed by KEY_*/BTN_* code.
    public private(set) var keys: EvdevBitmap

    public init() {
        absValues = [Int32](repeating: 0, count: EvdevCode.absMax + 1)
        keys = EvdevBitmap(byteCount: EvdevCode.keyBitmapBytes)
    }

    @inline(__always)
    public func abs(_ code: UInt16) -> Int32 {
        Int(code) < absValues.count ? absValues[Int(code)] : 0
    }

    @inline(__always)
    public func isDown(_ code: UInt16) -> Bool { keys.contains(Int(code)) }

    @inline(__always)
    public mutating func setAbs(_ code: UInt16, _ value: Int32) {
        if Int(code) < absValues.count { absValues[Int(code)] = value }
    }

    @inline(__always)
    public mutating func setKey(_ code: UInt16, down: Bool) { keys.set(Int(code), down) }

    /// Replaces the key bitmap (after EVIOCGKEY).
    public mutating func setKeys(_ bitmap: EvdevBitmap) {
        keys.copy(from: bitmap)
    }

    /// Copies `other` element by element, so neither side's storage is reallocated.
    @inline(__always)
    public mutating func copy(from other: EvdevState) {
        for i in absValues.indices { absValues[i] = other.absValues[i] }
        keys.copy(from: other.keys)
    }
}
