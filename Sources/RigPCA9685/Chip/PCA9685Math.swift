import RigCore

/// The PCA9685's arithmetic as pure functions: prescale, period, counts, calibration.
///
/// The chip counts 4096 ticks per PWM period; one tick is `(PRE_SCALE + 1) / oscillatorHz`
/// seconds, so the output frequency is `oscillatorHz / (4096 × (PRE_SCALE + 1))`.
public enum PCA9685Math {
    /// Ticks per PWM period (12-bit counter).
    public static let countsPerPeriod = 4096
    /// The PRE_SCALE values the chip accepts (1526 Hz … 24 Hz at 25 MHz).
    public static let prescaleRange = PCA9685OutputConfig.prescaleRange
    /// The datasheet's nominal internal oscillator. Real chips run at 23–27 MHz.
    public static let nominalOscillatorHz = 25_000_000.0

    /// PRE_SCALE for a frequency: `round(oscillatorHz / (4096 × frequencyHz)) − 1`
    /// (datasheet equation 1), clamped to 3…255.
    public static func prescale(frequencyHz: Double, oscillatorHz: Double) -> UInt8 {
        let exact = PCA9685OutputConfig.exactPrescale(frequencyHz: frequencyHz, oscillatorHz: oscillatorHz)
        guard exact.isFinite else { return UInt8(prescaleRange.upperBound) }
        let clamped = min(max(exact, Double(prescaleRange.lowerBound)), Double(prescaleRange.upperBound))
        return UInt8(clamped)
    }

    /// The frequency the chip actually produces with `prescale`.
    public static func frequencyHz(prescale: UInt8, oscillatorHz: Double) -> Double {
        oscillatorHz / (Double(countsPerPeriod) * (Double(prescale) + 1))
    }

    /// The PWM period in µs the chip actually produces with `prescale`.
    public static func periodMicroseconds(prescale: UInt8, oscillatorHz: Double) -> Double {
        Double(countsPerPeriod) * (Double(prescale) + 1) / oscillatorHz * 1_000_000
    }

    /// High-time counts for a pulse width, rounded to the nearest count: 0 means "no
    /// pulse" (program full off), 4096 means "always high" (program full on).
    @inline(__always)
    public static func counts(pulseMicroseconds: Double, periodMicroseconds: Double) -> Int {
        clampedCounts(pulseMicroseconds / periodMicroseconds * Double(countsPerPeriod))
    }

    /// High-time counts for a duty cycle in percent (0…100), rounded: 0 → full off,
    /// 4096 → full on.
    @inline(__always)
    public static func counts(dutyPercent: Double) -> Int {
        clampedCounts(dutyPercent / 100 * Double(countsPerPeriod))
    }

    /// The high time in µs that `counts` (0…4096) produce.
    @inline(__always)
    public static func pulseMicroseconds(counts: Int, periodMicroseconds: Double) -> Double {
        Double(counts) * periodMicroseconds / Double(countsPerPeriod)
    }

    @inline(__always)
    static func clampedCounts(_ exact: Double) -> Int {
        // NaN and negative → 0 (off): the safe reading of a nonsense command.
        guard exact > 0 else { return 0 }
        guard exact < Double(countsPerPeriod) else { return countsPerPeriod }
        return Int(exact.rounded())
    }

    /// The board's real oscillator frequency, from the output frequency measured on a
    /// channel (with a frequency counter, an oscilloscope or a logic analyser) while the
    /// rig ran with `frequencyHz` and `oscillatorHz` as configured:
    /// `oscillatorHz = measuredHz × 4096 × (PRE_SCALE + 1)`, where PRE_SCALE is what the
    /// configured values programmed. Write the result into the rig file's `oscillatorHz`.
    ///
    /// This is what `rig calibrate oscillator --measured-hz X` prints.
    public static func calibratedOscillator(
        measuredHz: Double, frequencyHz: Double,
        oscillatorHz: Double
    ) throws(PCA9685CalibrationError) -> Double {
        guard measuredHz.isFinite, measuredHz > 0 else { throw .invalidMeasurement(measuredHz) }
        let programmed = prescale(frequencyHz: frequencyHz, oscillatorHz: oscillatorHz)
        let result = measuredHz * Double(countsPerPeriod) * (Double(programmed) + 1)
        // The chip runs at 25 MHz ± 8 %; far outside that the measurement is of something else.
        guard plausibleOscillatorRangeHz.contains(result) else {
            throw .implausible(oscillatorHz: result, measuredHz: measuredHz, expectedHz: Self.frequencyHz(prescale: programmed, oscillatorHz: oscillatorHz))
        }
        return result
    }

    /// The oscillator frequencies a calibration may produce (the datasheet's 25 MHz with a
    /// wide margin around the 23–27 MHz seen on real chips).
    public static let plausibleOscillatorRangeHz: ClosedRange<Double> = 20_000_000...30_000_000
}
