import RigCore
import RigFormat

/// A PCA9685 16-channel PWM chip on a Linux I2C bus: the rig file's `"output"` section
/// when its type is `"pca9685"`, read here beside the chip's maths.
public struct PCA9685OutputConfig: Sendable, Equatable {
    public static let type = "pca9685"

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
        let slowest = PCA9685Math.frequencyHz(prescale: UInt8(Self.prescaleRange.upperBound), oscillatorHz: oscillatorHz)
        let fastest = PCA9685Math.frequencyHz(prescale: UInt8(Self.prescaleRange.lowerBound), oscillatorHz: oscillatorHz)
        return slowest...fastest
    }

    /// Reads the rig's output section (its type is `pca9685`) and checks the axes'
    /// channels against the chip's 16.
    public static func parse(_ output: OutputConfig, axes: [Axis]) throws(FileError) -> PCA9685OutputConfig {
        let object = try output.object()
        var config = PCA9685OutputConfig()
        if let bus = object.optional("bus") { config.bus = try bus.nonEmptyString(valid: "the I2C bus's device, like \"/dev/i2c-1\"") }
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
        try object.finish()
        try output.checkChannels(of: axes, count: PCA9685Register.channelCount)
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

extension PCA9685OutputConfig {
    /// The PRE_SCALE this config programs (the file's frequency, rounded by the chip).
    public var prescale: UInt8 { PCA9685Math.prescale(frequencyHz: frequencyHz, oscillatorHz: oscillatorHz) }

    /// The frequency the chip really makes with ``prescale`` (the file's, rounded).
    public var actualFrequencyHz: Double { PCA9685Math.frequencyHz(prescale: prescale, oscillatorHz: oscillatorHz) }

    /// One count of the chip: its real period over 4096, as a pulse and a duty step; with
    /// advice for finer servo steps while the frequency is below what digital servos take.
    public var quantum: OutputQuantum {
        let period = PCA9685Math.periodMicroseconds(prescale: prescale, oscillatorHz: oscillatorHz)
        let counts = Double(PCA9685Math.countsPerPeriod)
        var advice: String?
        let target = max(200, frequencyHz * 2)
        if target <= Self.frequencyRangeHz.upperBound, frequencyHz < 330 {
            advice =
                "a higher \"frequencyHz\" on the PCA9685 for digital servos (they take 200–330 Hz; counts shrink in proportion: \(Int(target)) Hz gives \(format(target / frequencyHz))× finer steps; analog servos need 50 Hz)"
        }
        return OutputQuantum(pulseMicroseconds: period / counts, dutyPercent: 100 / counts, servoAdvice: advice)
    }
}
