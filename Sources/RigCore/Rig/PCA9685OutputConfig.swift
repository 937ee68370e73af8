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

    static func parse(_ object: ObjectReader) throws(FileError) -> PCA9685OutputConfig {
        var config = PCA9685OutputConfig()
        if let bus = object.optional("bus") { config.bus = try bus.nonEmptyString() }
        if let address = object.optional("address") { config.address = try parseI2CAddress(address) }
        if let frequency = object.optional("frequencyHz") {
            config.frequencyHz = try frequency.number(in: frequencyRangeHz, unit: "Hz")
        }
        if let oscillator = object.optional("oscillatorHz") {
            config.oscillatorHz = try oscillator.number(in: 1_000_000...50_000_000, unit: "Hz")
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
