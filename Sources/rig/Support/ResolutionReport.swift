import FoundationEssentials
import Glibc
import RigCore
import RigDevices
import RigFormat

/// `rig check`'s lines on output resolution: what one output count is worth on each axis,
/// and, for a timelapse or a track, the axes that move less than a count on some frames
/// (or, on a continuous track, in some seconds).
enum ResolutionReport {
    static func describe(rig: Rig) -> [String] {
        // It was read on load: this cannot fail now.
        describe(rig: rig, output: try? OutputDrivers.config(rig))
    }

    private static func describe(rig: Rig, output: OutputDrivers.Config?) -> [String] {
        let axes = AxisResolution.of(rig) { output?.quantum(for: $0) ?? .continuous }
        guard axes.contains(where: { $0.countSize != nil }) else {
            return ["  resolution: continuous (the \(rig.output.type) output has no steps)"]
        }
        var what = rig.output.type
        if case .pca9685(let config)? = output {
            // What the chip makes: the file's frequency rounded to a whole PRE_SCALE.
            what += " at \(fixed(config.actualFrequencyHz, 2)) Hz"
        } else if case .sim(let config)? = output {
            what += " modelling a PCA9685 at \(format(config.frequencyHz)) Hz"
        }
        let parts = zip(rig.axes, axes).map { axis, r -> String in
            guard let count = r.countSize else { return "\(axis.name) continuous" }
            let size = axis.kind == .servo ? "\(fixed(count, 2)) µs" : "\(fixed(count, 3)) % duty"
            return "\(axis.name) \(size)\(r.unitsPerCount.map { axis.kind == .servo ? " ≈ \(fixed($0, 3))°" : "" } ?? "")"
        }
        return ["  resolution per output count (\(what)): " + parts.joined(separator: ", ")]
    }

    static func describe(program: Program) -> [String] {
        // Read once for both (it was read on load: this cannot fail now).
        let output = try? OutputDrivers.config(program.rig)
        var lines = describe(rig: program.rig, output: output)
        // A timelapse's frames, and a track's (the sky moves 0.004° a second: a Milky Way
        // track on a PCA9685 holds a count for many frames, then jumps), a continuous one's
        // a second at a time.
        if program.kind == .timelapse || program.kind == .track {
            for warning in TimelapseResolutionWarning.check(program) { output?.quantum(for: $0) ?? .continuous } {
                lines.append("\(program.file): warning: \(warning)")
            }
        }
        return lines
    }

}
