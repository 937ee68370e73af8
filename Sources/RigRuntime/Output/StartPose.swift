import Logging
import RigCore
import RigFormat

/// Where the rig starts: home, or where an earlier run left each axis (if the output
/// remembers), so a restart eases from there instead of jumping.
public enum StartPose {
    public struct Resolved: Sendable, Equatable {
        public var pose: [Double]
        /// Axes whose remembered position lay outside the soft limits (clamped).
        public var clampedAxes: [String]
        /// Axes that start from a remembered position.
        public var restoredAxes: [String]

        /// Home: nothing remembered.
        public static func home(_ rig: Rig) -> Resolved {
            Resolved(pose: rig.homePose, clampedAxes: [], restoredAxes: [])
        }

        /// Says where the rig starts, once, the same way for every command: from where the
        /// last run left it, and a warning for a remembered pose outside the soft limits.
        public func announce(_ logger: Logger) {
            if !restoredAxes.isEmpty {
                logger.info("starting from where the last run left \(quotedList(restoredAxes, quoted: false))")
            }
            if !clampedAxes.isEmpty {
                logger.warning(
                    "the remembered position of \(quotedList(clampedAxes, quoted: false)) is outside the soft limits; starting from the nearest limit (the servo may jump)"
                )
            }
        }
    }

    public static func resolve(rig: Rig, output: Output) -> Resolved {
        var resolved = Resolved.home(rig)
        for (i, axis) in rig.axes.enumerated() {
            guard let command = output.lastKnownCommand(for: OutputChannel(axis)) else { continue }
            let position: Double?
            switch command {
            case .pulse(let us): position = axis.calibration?.angle(forPulseMicroseconds: us)
            case .duty(let percent): position = percent
            case .off: position = nil
            }
            guard let position, position.isFinite else { continue }
            let clamped = min(max(position, axis.softMin), axis.softMax)
            if clamped != position { resolved.clampedAxes.append(axis.name) }
            resolved.pose[i] = clamped
            resolved.restoredAxes.append(axis.name)
        }
        return resolved
    }
}
