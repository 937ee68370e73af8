/// A PCA9685 16-channel PWM chip on a Linux I2C bus.
public struct PCA9685OutputConfig: Sendable, Equatable {
    public var bus: String = "/dev/i2c-1"
    public var address: Int = 0x40
    public var frequencyHz: Double = 50
    /// The chip's oscillator as calibrated for this board (nominally 25 MHz; real chips
    /// run 23–27 MHz).
    public var oscillatorHz: Double = 25_000_000
    /// Spread each channel's ON count over the period so pulses don't all rise at once.
    public var phaseStagger: Bool = false

    public init() {}

    public static let frequencyRangeHz: ClosedRange<Double> = 24...1526
    /// The PRE_SCALE values the chip accepts: the output frequency is
    /// `oscillatorHz / (4096 × (PRE_SCALE + 1))`.
    public static let prescaleRange: ClosedRange<Int> = 3...255

    /// PRE_SCALE for `frequencyHz`, unclamped: `round(oscillatorHz / (4096 × frequencyHz)) − 1`
    /// (datasheet equation 1). Outside ``prescaleRange`` the chip cannot make the frequency.
    public static func exactPrescale(frequencyHz: Double, oscillatorHz: Double) -> Double {
        (oscillatorHz / (4096 * frequencyHz)).rounded() - 1
    }

    /// The frequencies this oscillator can make: PRE_SCALE 255 to 3.
    public var achievableFrequencyRangeHz: ClosedRange<Double> {
        oscillatorHz / (4096 * Double(Self.prescaleRange.upperBound + 1))...oscillatorHz / (4096 * Double(Self.prescaleRange.lowerBound + 1))
    }

    static func parse(_ object: ObjectReader) throws(FileError) -> PCA9685OutputConfig {
        var config = PCA9685OutputConfig()
        if let bus = object.optional("bus") { config.bus = try bus.nonEmptyString() }
        if let address = object.optional("address") { config.address = try parseI2CAddress(address) }
        let frequency = object.optional("frequencyHz")
        if let frequency {
            config.frequencyHz = try frequency.number(in: frequencyRangeHz, unit: "Hz")
        }
        let oscillator = object.optional("oscillatorHz")
        if let oscillator {
            config.oscillatorHz = try oscillator.number(in: 1_000_000...50_000_000, unit: "Hz")
        }
        // The chip rounds PRE_SCALE (datasheet equation 1); one outside 3…255 would be
        // clamped by the driver to a frequency the file does not say.
        let prescale = exactPrescale(frequencyHz: config.frequencyHz, oscillatorHz: config.oscillatorHz)
        if !Self.prescaleRange.contains(Int(prescale)) {
            let range = config.achievableFrequencyRangeHz
            let (edge, side) = prescale > Double(Self.prescaleRange.upperBound) ? (range.lowerBound, "slowest") : (range.upperBound, "fastest")
            let message =
                "\(format(config.frequencyHz)) Hz cannot be made with a \(format(config.oscillatorHz)) Hz oscillator: the \(side) it makes is \(fixed(edge, 2)) Hz; valid: \(fixed(range.lowerBound, 2))…\(fixed(range.upperBound, 2)) Hz"
            if let frequency { throw frequency.error(message) }
            if let oscillator { throw oscillator.error(message) }
            throw object.error(message)
        }
        if let stagger = object.optional("phaseStagger") { config.phaseStagger = try stagger.bool() }
        return config
    }
}

/// A 7-bit I2C address written as `"0x40"` or `64`.
func parseI2CAddress(_ value: ValueReader) throws(FileError) -> Int {
    let address: Int
    if case .string(let string) = value.node.value {
        let text = string.text
        let digits = text.lowercased().hasPrefix("0x") ? String(text.dropFirst(2)) : text
        guard let parsed = Int(digits, radix: 16) else {
            throw value.error("\"\(elided(text))\" is not an I2C address; write it like \"0x40\"")
        }
        address = parsed
    } else {
        address = try value.integer()
    }
    guard (0x03...0x77).contains(address) else {
        throw value.error("I2C address 0x\(String(address, radix: 16)) is out of range; valid: 0x03…0x77")
    }
    return address
}
