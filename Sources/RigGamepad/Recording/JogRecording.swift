import RigCore
import RigFormat

/// The keyframes recorded while jogging, and the program file they make. Pure.
///
/// Keyframes programs: each key comes `spacingSeconds` after the previous one, or later
/// if the smooth path between them would break an axis's velocity or acceleration limit
/// (the gap is stretched until `FeasibilityChecker` accepts the whole program, so what
/// is saved always passes `rig check`). Timelapses: each key is `spacingFrames` after the
/// previous one. Positions are kept to a thousandth of a unit, and at least
/// `JogController.limitMargin` inside the soft limits (closer, the loop's limiter would
/// push a resting axis off the limit, and `rig play` stops a program it has to bend).
public struct JogRecording: Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        case keyframes(spacingSeconds: Double)
        /// Keys `spacingFrames` apart (1: every key is the next frame).
        case timelapse(spacingFrames: Int)
    }

    public let rig: Rig
    public let kind: Kind
    /// One pose per key (every axis).
    public private(set) var poses: [[Double]] = []
    /// Seconds (keyframes) or frame numbers (timelapse), increasing.
    public private(set) var times: [Double] = []

    public init(rig: Rig, kind: Kind) {
        self.rig = rig
        self.kind = kind
    }

    public var count: Int { poses.count }
    public var isEmpty: Bool { poses.isEmpty }

    /// Appends `pose` as the next key; returns its time (or frame).
    @discardableResult
    public mutating func append(_ pose: [Double]) -> Double {
        var pose = pose
        for i in rig.axes.indices {
            let margin = JogController.limitMargin(a: rig.axes[i].maxAcceleration, dt: rig.tickSeconds)
            pose[i] = min(max((pose[i] * 1000).rounded() / 1000, rig.axes[i].softMin + margin), rig.axes[i].softMax - margin)
        }
        guard let last = times.last else {
            poses.append(pose)
            times.append(0)
            return 0
        }
        switch kind {
        case .timelapse(let spacing):
            poses.append(pose)
            times.append(last + Double(max(spacing, 1)))
        case .keyframes(let spacing):
            var gap = spacing
            poses.append(pose)
            times.append(last + gap)
            // A bounded search: every retry lengthens the gap by a quarter.
            for _ in 0..<40 {
                guard let motion = motion(), !FeasibilityChecker.check(rig: previewRig, motion: motion, startPose: pose0).feasible else { break }
                gap *= 1.25
                times[times.count - 1] = last + gap
            }
        }
        return times[times.count - 1]
    }

    /// Removes the last key, if any.
    public mutating func removeLast() {
        guard !poses.isEmpty else { return }
        poses.removeLast()
        times.removeLast()
    }

    private var pose0: [Double] { poses.first ?? rig.homePose }

    /// The rig without park positions: a preview ends where the program ends.
    public var previewRig: Rig {
        var rig = self.rig
        for i in rig.axes.indices { rig.axes[i].park = nil }
        return rig
    }

    /// The recorded program as the player runs it (nil while empty). Timelapse frames
    /// become steps with no settle time.
    public func motion() -> Motion? {
        guard !poses.isEmpty else { return nil }
        switch kind {
        case .keyframes:
            var tracks: [AxisTrack?] = []
            for axis in rig.axes.indices {
                tracks.append(AxisTrack(keys: poses.indices.map { Keyframe(time: times[$0], value: poses[$0][axis]) }))
            }
            return .continuous(tracks: tracks, durationSeconds: times.last ?? 0)
        case .timelapse:
            return .stepped(poses.indices.map { Step(pose: poses[$0], settleSeconds: 0, label: "frame \(Int(times[$0]))") })
        }
    }

    /// The program file: `{"rig": …, "kind": "keyframes", "keyframes": {axis: [{"t", "value"}]}}`
    /// or the timelapse form keyed by frame. `rigPath` is relative to the program file.
    public func programJSON(rigPath: String) -> String {
        var out = "{\n  \"rig\": \(JSONText.string(rigPath)),\n"
        let timeKey: String
        let indent: String
        switch kind {
        case .keyframes:
            out += "  \"kind\": \"keyframes\",\n  \"keyframes\": {\n"
            timeKey = "t"
            indent = "    "
        case .timelapse:
            let frames = Int(times.last ?? 0) + 1
            out += "  \"kind\": \"timelapse\",\n  \"timelapse\": {\n    \"frames\": \(frames),\n    \"keyframes\": {\n"
            timeKey = "frame"
            indent = "      "
        }
        for (axis, spec) in rig.axes.enumerated() {
            let keys = poses.indices.map { i in
                let time = isTimelapse ? String(Int(times[i])) : format(times[i])
                return "{\"\(timeKey)\": \(time), \"value\": \(format(poses[i][axis]))}"
            }
            out += "\(indent)\(JSONText.string(spec.name)): [\(keys.joined(separator: ", "))]"
            out += axis == rig.axes.count - 1 ? "\n" : ",\n"
        }
        out += isTimelapse ? "    }\n  }\n}\n" : "  }\n}\n"
        return out
    }

    private var isTimelapse: Bool {
        if case .timelapse = kind { return true }
        return false
    }
}
