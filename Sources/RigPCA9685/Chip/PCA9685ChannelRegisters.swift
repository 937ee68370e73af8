/// One channel's LEDn_ON and LEDn_OFF values as the chip holds them: 12-bit counts plus
/// bit 12 (`pca9685FullOnOffBit`, register bit 4 of the _H byte) for full on / full off.
public struct PCA9685ChannelRegisters: Sendable, Equatable {
    /// LEDn_ON_H:LEDn_ON_L.
    public var on: UInt16
    /// LEDn_OFF_H:LEDn_OFF_L.
    public var off: UInt16

    public init(on: UInt16, off: UInt16) {
        self.on = on
        self.off = off
    }

    /// Full off (OFF_H bit 4), the power-on state of every channel.
    public static let fullOff = PCA9685ChannelRegisters(on: 0, off: pca9685FullOnOffBit)
    /// Full on (ON_H bit 4), OFF without its full bit (full off would win).
    public static let fullOn = PCA9685ChannelRegisters(on: pca9685FullOnOffBit, off: 0)

    /// The registers for `counts` high ticks (0…4096) starting at tick `phase` (0…4095).
    /// 0 counts is full off and 4096 full on; anything between is ON = phase,
    /// OFF = (phase + counts) mod 4096, so ON ≠ OFF always (the datasheet forbids equal
    /// values). OFF below ON is legal: the pulse wraps around the end of the period.
    @inline(__always)
    public static func pulse(counts: Int, phase: Int) -> PCA9685ChannelRegisters {
        if counts <= 0 { return .fullOff }
        if counts >= PCA9685Math.countsPerPeriod { return .fullOn }
        let mask = PCA9685Math.countsPerPeriod - 1
        return PCA9685ChannelRegisters(on: UInt16(phase & mask), off: UInt16((phase + counts) & mask))
    }

    /// The high ticks per period these registers produce (0…4096).
    public var highCounts: Int {
        if off & pca9685FullOnOffBit != 0 { return 0 }
        if on & pca9685FullOnOffBit != 0 { return PCA9685Math.countsPerPeriod }
        let mask = PCA9685Math.countsPerPeriod - 1
        return (Int(off) - Int(on) + PCA9685Math.countsPerPeriod) & mask
    }

    /// Register `k` of the channel: 0 LEDn_ON_L, 1 LEDn_ON_H, 2 LEDn_OFF_L, 3 LEDn_OFF_H.
    @inline(__always)
    public func byte(_ k: Int) -> UInt8 {
        let word = k < 2 ? on : off
        return UInt8(truncatingIfNeeded: k & 1 == 0 ? word : word >> 8)
    }

    /// Writes LEDn_ON_L, LEDn_ON_H, LEDn_OFF_L, LEDn_OFF_H at `pointer`.
    @inline(__always)
    func store(to pointer: UnsafeMutableRawBufferPointer, at offset: Int) {
        pointer[offset] = UInt8(truncatingIfNeeded: on)
        pointer[offset + 1] = UInt8(truncatingIfNeeded: on >> 8)
        pointer[offset + 2] = UInt8(truncatingIfNeeded: off)
        pointer[offset + 3] = UInt8(truncatingIfNeeded: off >> 8)
    }
}
