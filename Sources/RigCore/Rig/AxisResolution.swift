import FoundationEssentials
import Glibc
import RigFormat

/// The smallest change an output can make on a channel: a servo pulse step in µs and a
/// duty step in %, or nil for a continuous (simulated) output. The drivers know these
/// (`PCA9685Math`, `BLEControlCommand`); the core only does the arithmetic.
public struct OutputQuantum: Sendable, Equatable {
    public var pulseMicroseconds: Double?
    public var dutyPercent: Double?
    /// What the output's own settings could do for finer servo steps (the driver's advice,
    /// such as a higher PWM frequency), if anything.
    public var servoAdvice: String?

    public init(pulseMicroseconds: Double?, dutyPercent: Double?, servoAdvice: String? = nil) {
        self.pulseMicroseconds = pulseMicroseconds
        self.dutyPercent = dutyPercent
        self.servoAdvice = servoAdvice
    }

    /// The simulated rig: no steps.
    public static let continuous = OutputQuantum(pulseMicroseconds: nil, dutyPercent: nil)
}

/// How finely an axis can be placed on its output: one output count, and what it is worth
/// in the axis's unit (degrees for a servo, % for a pwm axis).
public struct AxisResolution: Sendable, Equatable {
    public var axis: String
    /// One count of the output in µs (servo) or % duty (pwm); nil: continuous.
    public var countSize: Double?
    /// One count in the axis's unit, the coarsest over the soft range (a calibration with
    /// several segments is coarser where it has fewer µs per degree); nil: continuous.
    public var unitsPerCount: Double?

    /// The resolution of every axis of `rig` on an output with `quantum`.
    public static func of(_ rig: Rig, quantum: OutputQuantum) -> [AxisResolution] {
        of(rig) { _ in quantum }
    }

    /// The resolution of every axis of `rig`, each on its output's `quantum(axis)`.
    public static func of(_ rig: Rig, quantum quantumOf: (Axis) -> OutputQuantum) -> [AxisResolution] {
        rig.axes.map { axis in
            let quantum = quantumOf(axis)
            switch axis.kind {
            case .pwm:
                return AxisResolution(axis: axis.name, countSize: quantum.dutyPercent, unitsPerCount: quantum.dutyPercent)
            case .servo:
                guard let step = quantum.pulseMicroseconds else { return AxisResolution(axis: axis.name, countSize: nil, unitsPerCount: nil) }
                return AxisResolution(
                    axis: axis.name, countSize: step,
                    unitsPerCount: axis.calibration.map { step * maxDegreesPerMicrosecond($0, over: axis.softRange) })
            }
        }
    }

    /// The steepest |Δangle / Δpulse| of the calibration's segments that the range touches
    /// (the end segments extend past the table, as `pulseMicroseconds(forAngle:)` does).
    static func maxDegreesPerMicrosecond(_ calibration: Calibration, over range: ClosedRange<Double>) -> Double {
        let a = calibration.angles
        let p = calibration.pulses
        var steepest = 0.0
        for i in 1..<a.count {
            let low = i == 1 ? -Double.infinity : a[i - 1]
            let high = i == a.count - 1 ? Double.infinity : a[i]
            guard range.upperBound >= low, range.lowerBound <= high else { continue }
            steepest = max(steepest, abs((a[i] - a[i - 1]) / (p[i] - p[i - 1])))
        }
        return steepest
    }
}

/// A timelapse axis that moves less than one output count on some frames: the output
/// holds the same count for a few frames and then steps, so the picture stutters. A
/// continuous path (a sky track for video) is judged the same way a second at a time.
public struct TimelapseResolutionWarning: Sendable, Equatable, CustomStringConvertible {
    public var axis: String
    public var unit: String
    public var unitsPerCount: Double
    /// Frames on which the axis should move, and those of them on which its output count stays.
    public var movingFrames: Int
    public var stalledFrames: Int
    /// The smallest per-frame move, in the axis's unit.
    public var smallestMove: Double
    /// 1-based frame ranges where the count stays (the first few).
    public var stalledRanges: [ClosedRange<Int>]
    /// What would help, for this rig's output.
    public var advice: String
    /// What a sample is: a frame (a stepped program), or a second of a continuous path
    /// (the samples at 0, 1, 2… s numbered as frames: the second from 0 to 1 s is 2).
    public var per: Sample = .frame

    public enum Sample: String, Sendable, Equatable {
        case frame, second
    }

    public var description: String {
        let seconds = per == .second
        let ranges = stalledRanges.map { r in
            seconds
                ? "\(r.lowerBound - 2)–\(r.upperBound - 1) s" : r.count == 1 ? "\(r.lowerBound)" : "\(r.lowerBound)–\(r.upperBound)"
        }.joined(separator: ", ")
        // Moving frames per count change: how often the picture jumps while the axis moves.
        let every =
            stalledFrames >= movingFrames
            ? ""
            : "; while it moves, the output steps once every \(fixedText(Double(movingFrames) / Double(movingFrames - stalledFrames))) \(per.rawValue)s on average"
        let what = seconds ? "seconds" : "frames"
        return
            "axis \(axis) moves less than one output count (\(fixedText(unitsPerCount))\(unit)) in \(stalledFrames) of its \(movingFrames) moving \(what) (smallest move \(fixedText(smallestMove, places: 3))\(unit) per \(per.rawValue); \(seconds ? "at " : "frames ")\(ranges)): the output holds still and then jumps a count, so the \(seconds ? "video" : "picture") stutters\(every). What helps: \(advice)"
    }

    /// Checks a stepped program frame by frame (each step is a frame) against `quantum`:
    /// the count each frame's pose sends, and whether it changes when the pose does.
    public static func check(_ program: Program, quantum: OutputQuantum) -> [TimelapseResolutionWarning] {
        check(program) { _ in quantum }
    }

    /// The same, each axis on its output's `quantum(axis)`.
    public static func check(_ program: Program, quantum: (Axis) -> OutputQuantum) -> [TimelapseResolutionWarning] {
        switch program.motion {
        case .stepped(let steps):
            return check(poses: steps.map(\.pose), rig: program.rig, quantum: quantum, per: .frame)
        case .continuous(let tracks, let duration):
            // A second at a time: an output that holds a count for seconds while the path
            // moves is seen in a video as a hold and a jump.
            let rig = program.rig
            let seconds = Int(duration.rounded(.down))
            guard seconds >= 1 else { return [] }
            var cursors = Array(repeating: 0, count: rig.axes.count)
            let poses = (0...seconds).map { t in
                rig.axes.indices.map { i in tracks[i]?.value(at: Double(t), cursor: &cursors[i]) ?? rig.homePose[i] }
            }
            return check(poses: poses, rig: rig, quantum: quantum, per: .second)
        }
    }

    /// The check on poses a frame (or a second) apart.
    static func check(poses: [[Double]], rig: Rig, quantum quantumOf: (Axis) -> OutputQuantum, per: Sample) -> [TimelapseResolutionWarning] {
        guard poses.count > 1 else { return [] }
        let resolutions = AxisResolution.of(rig, quantum: quantumOf)
        var warnings: [TimelapseResolutionWarning] = []
        for (index, axis) in rig.axes.enumerated() {
            let quantum = quantumOf(axis)
            guard let perCount = resolutions[index].unitsPerCount, let count = resolutions[index].countSize, count > 0 else { continue }
            func counts(_ position: Double) -> Double {
                switch axis.kind {
                case .servo: ((axis.calibration?.pulseMicroseconds(forAngle: position) ?? 1500) / count).rounded()
                case .pwm: (position / count).rounded()
                }
            }
            var moving = 0
            var stalled = 0
            var smallest = Double.infinity
            var ranges: [ClosedRange<Int>] = []
            for frame in 1..<poses.count {
                let before = poses[frame - 1][index]
                let after = poses[frame][index]
                let move = abs(after - before)
                guard move > 1e-9 else { continue }
                moving += 1
                smallest = min(smallest, move)
                guard counts(after) == counts(before) else { continue }
                stalled += 1
                let number = frame + 1
                if let last = ranges.last, last.upperBound == number - 1 {
                    ranges[ranges.count - 1] = last.lowerBound...number
                } else {
                    ranges.append(number...number)
                }
            }
            guard stalled > 0 else { continue }
            warnings.append(
                TimelapseResolutionWarning(
                    axis: axis.name, unit: axis.unit, unitsPerCount: perCount, movingFrames: moving,
                    stalledFrames: stalled, smallestMove: smallest, stalledRanges: Array(ranges.prefix(4)),
                    advice: advice(axis: axis, quantum: quantum, per: per), per: per))
        }
        return warnings
    }

    static func advice(axis: Axis, quantum: OutputQuantum, per: Sample = .frame) -> String {
        var options: [String] = []
        if axis.kind == .servo, let own = quantum.servoAdvice { options.append(own) }
        if axis.kind == .servo {
            options.append("a wider calibration (more µs per degree: use the servo's whole pulse range if its travel allows, or gear the axis down)")
        }
        switch per {
        case .frame: options.append("a longer move or fewer frames, so each frame moves at least one count")
        case .second:
            options.append(
                "for a timelapse, a stepped track (\"frames\" with \"trigger\": \"interval:SECONDS\") whose interval moves the axis at least one count a frame")
        }
        return options.joined(separator: "; ")
    }
}

/// `places` decimals, trailing zeros dropped.
private func fixedText(_ value: Double, places: Int = 2) -> String {
    var text = fixed(value, places)
    while text.hasSuffix("0") { text.removeLast() }
    if text.hasSuffix(".") { text.removeLast() }
    return text
}
