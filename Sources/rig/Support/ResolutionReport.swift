import Foundation
import RigBLEControl
import RigCore
import RigPCA9685

extension OutputQuantum {
    /// The smallest step each output makes: a PCA9685 count (its real period, from the
    /// prescale its oscillator and frequency give, over 4096), BLEControl's SERVO_VAL (1 µs)
    /// and PWM_VAL (one per mille), and none for the simulated rig.
    init(_ output: OutputConfig) {
        switch output {
        case .sim:
            self = .continuous
        case .pca9685(let config):
            let prescale = PCA9685Math.prescale(frequencyHz: config.frequencyHz, oscillatorHz: config.oscillatorHz)
            let period = PCA9685Math.periodMicroseconds(prescale: prescale, oscillatorHz: config.oscillatorHz)
            self.init(pulseMicroseconds: period / Double(PCA9685Math.countsPerPeriod), dutyPercent: 100 / Double(PCA9685Math.countsPerPeriod))
        case .blecontrol:
            // SERVO_VAL is the pulse minus 1000 µs in whole µs; PWM_VAL a duty in per mille.
            self.init(pulseMicroseconds: 1, dutyPercent: 100 / Double(BLEControlCommand.maxValue))
        }
    }
}

/// `rig check`'s lines on output resolution: what one output count is worth on each axis,
/// and, for a timelapse, the axes that move less than a count on some frames.
enum ResolutionReport {
    static func describe(rig: Rig) -> [String] {
        let quantum = OutputQuantum(rig.output)
        let axes = AxisResolution.of(rig, quantum: quantum)
        guard axes.contains(where: { $0.countSize != nil }) else {
            return ["  resolution: continuous (the \(rig.output.typeName) output has no steps)"]
        }
        var what = rig.output.typeName
        if case .pca9685(let config) = rig.output { what += " at \(format(config.frequencyHz)) Hz" }
        let parts = zip(rig.axes, axes).map { axis, r -> String in
            guard let count = r.countSize else { return "\(axis.name) continuous" }
            let size = axis.kind == .servo ? "\(fixed(count, 2)) µs" : "\(fixed(count, 3)) % duty"
            return "\(axis.name) \(size)\(r.unitsPerCount.map { axis.kind == .servo ? " ≈ \(fixed($0, 3))°" : "" } ?? "")"
        }
        return ["  resolution per output count (\(what)): " + parts.joined(separator: ", ")]
    }

    static func describe(program: Program) -> [String] {
        var lines = describe(rig: program.rig)
        if program.kind == .timelapse {
            for warning in TimelapseResolutionWarning.check(program, quantum: OutputQuantum(program.rig.output)) {
                lines.append("\(program.file): warning: \(warning)")
            }
        }
        return lines
    }

}
