import FoundationEssentials
import Glibc
import RigCore
import RigFormat

/// What a PCA9685's MODE1 and PRE_SCALE say about it.
public struct PCA9685ProbeReport: Sendable, Equatable, CustomStringConvertible {
    public var address: Int
    public var mode1: PCA9685Mode1
    public var prescale: UInt8

    /// Power-on values: nothing has initialised the chip since it was powered (or it
    /// browned out).
    public var isPowerOnState: Bool { mode1 == .powerOn && prescale == PCA9685Register.preScalePowerOn }
    /// Whether the outputs are running (SLEEP clear).
    public var isAwake: Bool { !mode1.contains(.sleep) }
    /// PRE_SCALE below 3 cannot be a PCA9685's (the chip clamps it): something else answers.
    public var looksLikePCA9685: Bool { Int(prescale) >= PCA9685Math.prescaleRange.lowerBound }
    /// The output frequency at the nominal 25 MHz oscillator.
    public var nominalFrequencyHz: Double {
        PCA9685Math.frequencyHz(prescale: prescale, oscillatorHz: PCA9685Math.nominalOscillatorHz)
    }

    public var description: String {
        var text =
            "0x\(String(address, radix: 16)): MODE1 \(hex(mode1.rawValue)), PRE_SCALE \(prescale) "
            + "(≈ \(fixed(nominalFrequencyHz, 1)) Hz at 25 MHz)"
        if !looksLikePCA9685 {
            text += " — PRE_SCALE below 3: this is probably not a PCA9685"
        } else if isPowerOnState {
            text += " — power-on state: asleep, not initialised since power-up"
        } else {
            text += isAwake ? " — running" : " — asleep"
            if mode1.contains(.allCall) { text += ", answering All Call 0x70" }
        }
        return text
    }
}
