/// `struct input_absinfo` (EVIOCGABS): an absolute axis's current value and range.
/// Ranges differ per pad (±32767, 0…255, 0…1023, −1…1 hats): always read, never assumed.
public struct AbsInfo: Sendable, Equatable {
    public var value: Int32
    public var minimum: Int32
    public var maximum: Int32
    /// The kernel drops changes smaller than this (noise filter).
    public var fuzz: Int32
    /// Values within ±flat of the centre are reported as the centre by some drivers and
    /// are noise on others: a minimum deadzone.
    public var flat: Int32
    public var resolution: Int32

    public init(value: Int32 = 0, minimum: Int32, maximum: Int32, fuzz: Int32 = 0, flat: Int32 = 0, resolution: Int32 = 0) {
        self.value = value
        self.minimum = minimum
        self.maximum = maximum
        self.fuzz = fuzz
        self.flat = flat
        self.resolution = resolution
    }

    /// `raw` as −1…1 around the centre of the range (clamped).
    @inline(__always)
    public func normalized(_ raw: Int32) -> Double {
        let low = Double(minimum)
        let high = Double(maximum)
        guard high > low else { return 0 }
        let centre = (low + high) / 2
        let half = (high - low) / 2
        return min(max((Double(raw) - centre) / half, -1), 1)
    }

    /// `flat` as a fraction of half the range: the smallest sensible deadzone.
    public var flatFraction: Double {
        let half = (Double(maximum) - Double(minimum)) / 2
        return half > 0 ? min(Double(flat) / half, 1) : 0
    }
}
