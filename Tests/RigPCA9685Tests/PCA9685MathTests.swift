import Testing

@testable import RigPCA9685

@Suite struct PCA9685MathTests {
    @Test(arguments: [(50.0, 121), (60.0, 101), (200.0, 30), (330.0, 17)])
    func prescaleAtNominalOscillator(frequencyHz: Double, expected: Int) {
        // round(25 MHz / (4096 × f)) − 1
        #expect(Int(PCA9685Math.prescale(frequencyHz: frequencyHz, oscillatorHz: 25_000_000)) == expected)
    }

    @Test func prescaleUsesTheCalibratedOscillator() {
        // A fast chip (26.5 MHz) needs a bigger divider for the same 50 Hz.
        #expect(PCA9685Math.prescale(frequencyHz: 50, oscillatorHz: 26_500_000) == 128)
        let actual = PCA9685Math.frequencyHz(prescale: 128, oscillatorHz: 26_500_000)
        #expect(abs(actual - 50) < 0.2)
    }

    @Test func prescaleIsClampedToTheChipsRange() {
        #expect(PCA9685Math.prescale(frequencyHz: 5000, oscillatorHz: 25_000_000) == 3)
        #expect(PCA9685Math.prescale(frequencyHz: 10, oscillatorHz: 25_000_000) == 255)
        #expect(PCA9685Math.prescale(frequencyHz: 1526, oscillatorHz: 25_000_000) == 3)
        #expect(PCA9685Math.prescale(frequencyHz: 24, oscillatorHz: 25_000_000) == 253)
    }

    @Test func countsRoundToTheNearestTick() {
        let period = PCA9685Math.periodMicroseconds(prescale: 121, oscillatorHz: 25_000_000)
        #expect(abs(period - 19_988.48) < 0.001)
        for pulse in stride(from: 500.0, through: 2500, by: 37.5) {
            let counts = PCA9685Math.counts(pulseMicroseconds: pulse, periodMicroseconds: period)
            let programmed = PCA9685Math.pulseMicroseconds(counts: counts, periodMicroseconds: period)
            #expect(abs(programmed - pulse) <= period / 4096 / 2 + 1e-9)
        }
        #expect(PCA9685Math.counts(pulseMicroseconds: 1500, periodMicroseconds: period) == 307)
    }

    @Test func countsAtTheEnds() {
        #expect(PCA9685Math.counts(pulseMicroseconds: 0, periodMicroseconds: 20_000) == 0)
        #expect(PCA9685Math.counts(pulseMicroseconds: -5, periodMicroseconds: 20_000) == 0)
        #expect(PCA9685Math.counts(pulseMicroseconds: .nan, periodMicroseconds: 20_000) == 0)
        #expect(PCA9685Math.counts(pulseMicroseconds: 20_000, periodMicroseconds: 20_000) == 4096)
        #expect(PCA9685Math.counts(pulseMicroseconds: 30_000, periodMicroseconds: 20_000) == 4096)
        #expect(PCA9685Math.counts(dutyPercent: 0) == 0)
        #expect(PCA9685Math.counts(dutyPercent: 50) == 2048)
        #expect(PCA9685Math.counts(dutyPercent: 100) == 4096)
        #expect(PCA9685Math.counts(dutyPercent: 0.01) == 0)
        #expect(PCA9685Math.counts(dutyPercent: 99.99) == 4096)
        #expect(PCA9685Math.counts(dutyPercent: 99.98) == 4095)
    }

    @Test func registersNeverHaveOnEqualToOff() {
        for phase in stride(from: 0, to: 4096, by: 256) {
            for counts in [0, 1, 2, 100, 2048, 4000, 4095, 4096, 5000] {
                let r = PCA9685ChannelRegisters.pulse(counts: counts, phase: phase)
                let fullOn = r.on & pca9685FullOnOffBit != 0
                let fullOff = r.off & pca9685FullOnOffBit != 0
                if !fullOn, !fullOff { #expect(r.on != r.off) }
                #expect(r.highCounts == min(max(counts, 0), 4096))
            }
        }
        #expect(PCA9685ChannelRegisters.pulse(counts: 0, phase: 512) == .fullOff)
        #expect(PCA9685ChannelRegisters.pulse(counts: 4096, phase: 512) == .fullOn)
    }

    @Test func oscillatorCalibrationFromAMeasuredFrequency() throws {
        // Configured 50 Hz at 25 MHz programs PRE_SCALE 121; the scope says 51.0 Hz.
        let oscillator = try PCA9685Math.calibratedOscillator(measuredHz: 51, frequencyHz: 50, oscillatorHz: 25_000_000)
        #expect(oscillator == 51 * 4096 * 122)
        // With the calibrated value the chip gets a divider that hits 50 Hz closer.
        let prescale = PCA9685Math.prescale(frequencyHz: 50, oscillatorHz: oscillator)
        #expect(prescale == 123)
        let actual = PCA9685Math.frequencyHz(prescale: prescale, oscillatorHz: oscillator)
        #expect(abs(actual - 50) < abs(51 - 50))
    }

    @Test func oscillatorCalibrationRefusesNonsense() {
        #expect(throws: PCA9685CalibrationError.invalidMeasurement(0)) {
            try PCA9685Math.calibratedOscillator(measuredHz: 0, frequencyHz: 50, oscillatorHz: 25_000_000)
        }
        #expect(throws: PCA9685CalibrationError.self) {
            try PCA9685Math.calibratedOscillator(measuredHz: 500, frequencyHz: 50, oscillatorHz: 25_000_000)
        }
        #expect(throws: PCA9685CalibrationError.self) {
            try PCA9685Math.calibratedOscillator(measuredHz: .nan, frequencyHz: 50, oscillatorHz: 25_000_000)
        }
    }

    @Test func registerNames() {
        #expect(PCA9685Register.name(PCA9685Register.mode1) == "MODE1")
        #expect(PCA9685Register.name(PCA9685Register.ledOnL(channel: 3) + 3) == "LED3_OFF_H")
        #expect(PCA9685Register.name(PCA9685Register.preScale) == "PRE_SCALE")
        #expect(PCA9685Register.ledOnL(channel: 15) + 3 == PCA9685Register.led15OffH)
    }
}
