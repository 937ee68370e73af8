import Foundation
import RigCore
import RigFormat

/// Rigs, programs and files the benchmarks share. Built in code (or as program text for
/// the parser), so a benchmark run needs no files.
enum Fixtures {
    static let rateHz = 200.0

    /// `count` servo axes with room to swing ±30° within their limits.
    static func rig(axes count: Int, rateHz: Double = rateHz) -> Rig {
        let calibration = try? Calibration.make(points: [(-90, 500), (90, 2500)], inverted: false).get()
        let axes = (0..<count).map { i in
            Axis(name: "axis\(i)", kind: .servo, channel: i, calibration: calibration, home: 0, park: nil,
                 softMin: -85, softMax: 85, maxVelocity: 90, maxAcceleration: 180, idle: .hold)
        }
        return Rig(name: "bench \(count) axes", axes: axes, output: .sim, loopRateHz: rateHz)
    }

    /// Every axis swings ±30° every 2 s for `seconds`, each segment with `interpolation`,
    /// starting at home (so the player has no lead-in move).
    static func swings(axes count: Int, interpolation: Interpolation, seconds: Double) -> Motion {
        let segments = Int((seconds / 2).rounded(.up))
        let keys = (0...segments).map { (i: Int) -> Keyframe in
            let value: Double = i == 0 ? 0 : (i % 2 == 1 ? 30 : -30)
            return Keyframe(time: Double(i) * 2, value: value, interpolation: interpolation)
        }
        let track = AxisTrack(keys: keys)
        return .continuous(tracks: [AxisTrack?](repeating: track, count: count), durationSeconds: Double(segments) * 2)
    }

    /// The CSS `ease-in-out` curve.
    static let easeInOutBezier = Interpolation.bezier(x1: 0.42, y1: 0, x2: 0.58, y2: 1)

    /// A pan/tilt rig as program-file JSON (embedded in the program texts below).
    static let panTiltRigJSON = """
        {"name": "bench pan/tilt", "loopRateHz": 100, "output": {"type": "sim"}, "axes": [
          {"name": "pan", "channel": 0, "pulseUs": [500, 2500], "angleDeg": [-180, 180], "softLimits": [-180, 180],
           "maxVelocity": 120, "maxAcceleration": 360},
          {"name": "tilt", "channel": 1, "pulseUs": [500, 2500], "angleDeg": [-90, 90], "softLimits": [-90, 90],
           "maxVelocity": 90, "maxAcceleration": 270}]}
        """

    /// A timelapse of `frames` frames: pan −60° → 60° and tilt 0 → 20° → 0 over the whole
    /// run, a frame every tick's worth of motion apart (as an animated timelapse is).
    static func timelapseProgram(frames: Int) -> String {
        """
        {"rig": \(panTiltRigJSON), "kind": "timelapse", "trigger": "auto", "settleSeconds": 0.2,
         "timelapse": {"frames": \(frames), "keyframes": {
           "pan": [{"frame": 0, "value": -60}, {"frame": \(frames - 1), "value": 60}],
           "tilt": [{"frame": 0, "value": 0}, {"frame": \(frames / 2), "value": 20}, {"frame": \(frames - 1), "value": 0}]}}}
        """
    }

    /// A panorama with a long lens over the whole pan circle and ±75° of tilt: 1,000 shots
    /// in 28 rows (`rig plan` on `panoramaProgram` says so).
    static let panoramaSpec = PanoramaSpec(fieldOfView: FieldOfView(horizontalDegrees: 10.3, verticalDegrees: 7.5), overlap: 0.25,
                                           pan: -180...180, tilt: -75...75, panAxis: 0, tiltAxis: 1)

    static let panoramaProgram = """
        {"rig": \(panTiltRigJSON), "kind": "panorama", "trigger": "auto", "settleSeconds": 0.2,
         "panorama": {"lens": {"horizontalFovDeg": 10.3, "verticalFovDeg": 7.5}, "overlapPercent": 25,
                      "pan": [-180, 180], "tilt": [-75, 75]}}
        """

    /// A large keyframe program file: `axes` axes of `keys` keys each, varied interpolations.
    static func largeKeyframeProgram(axes: Int, keys: Int) -> String {
        let interps = ["smooth", "easeInOutSine", "easeInOutCubic", "bezier"]
        let rigAxes = (0..<axes).map { i in
            "{\"name\": \"axis\(i)\", \"channel\": \(i), \"pulseUs\": [500, 2500], \"angleDeg\": [-90, 90], \"softLimits\": [-85, 85], \"maxVelocity\": 90, \"maxAcceleration\": 180}"
        }.joined(separator: ",\n    ")
        let tracks = (0..<axes).map { a in
            let list = (0..<keys).map { k in
                let value: Double = k == 0 || k == keys - 1 ? 0 : (k % 2 == 1 ? 20.5 : -20.25)
                let interp = interps[(a + k) % interps.count]
                let bezier = interp == "bezier" ? ", \"bezier\": [0.42, 0, 0.58, 1]" : ""
                return "{\"t\": \(2 * k), \"value\": \(value), \"interp\": \"\(interp)\"\(bezier)}"
            }.joined(separator: ", ")
            return "\"axis\(a)\": [\(list)]"
        }.joined(separator: ",\n    ")
        return """
            {"$schema": "../schema/program.schema.json", "description": "benchmark: a large keyframe program",
             "rig": {"name": "bench", "loopRateHz": 200, "output": {"type": "sim"}, "axes": [
                \(rigAxes)]},
             "kind": "keyframes",
             "keyframes": {
                \(tracks)}}
            """
    }

    /// `Benchmarks/programs/make_large.py keyframes N`: N keyframes in all on pan and tilt,
    /// 0.02 s apart, linear segments through a slow wave that starts and ends at rest.
    static func keyframeProgram(total: Int) -> String {
        let perAxis = total / 2
        let duration = Double(perAxis - 1) * 0.02
        let period = duration / max(1, (duration / 8).rounded())
        var text = "{\"rig\": \(panTiltRigJSON), \"kind\": \"keyframes\", \"keyframes\": {\n"
        text.reserveCapacity(total * 56)
        for (n, (name, amplitude)) in [("pan", 20.0), ("tilt", 10.0)].enumerated() {
            text += "\"\(name)\": ["
            for k in 0..<perAxis {
                let t = Double(k) * 0.02
                let value = amplitude * (1 - cos(2 * Double.pi * t / period)) / 2
                text += (k == 0 ? "" : ", ") + "{\"t\": \(Double((t * 100).rounded()) / 100), \"value\": \((value * 1e6).rounded() / 1e6), \"interp\": \"linear\"}"
            }
            text += n == 0 ? "],\n" : "]\n"
        }
        return text + "}}\n"
    }

    /// `make_large.py panorama`: a 3.3° × 2.2° lens over the whole circle and ±75° of tilt,
    /// 9,998 shots (a panorama of more than 10,000 is refused).
    static let panorama10kProgram = """
        {"rig": \(panTiltRigJSON), "kind": "panorama", "trigger": "auto", "settleSeconds": 0.2,
         "panorama": {"lens": {"horizontalFovDeg": 3.3, "verticalFovDeg": 2.2}, "overlapPercent": 25,
                      "pan": [-180, 180], "tilt": [-75, 75]}}
        """

    /// Parses program text whose rig is embedded.
    static func parse(_ text: String, file: String) throws -> Program {
        try ProgramParser.parse(text: text, file: file) { _, value throws(FileError) in
            throw value.error("benchmark programs embed their rig")
        }
    }
}

/// Player and scratch frame in one box, so the measured loop mutates them in place.
final class PlayerBox {
    var player: Player
    var frame: [Double]

    init(rig: Rig, motion: Motion) {
        player = Player(rig: rig, motion: motion, startPose: rig.homePose)
        frame = rig.homePose
    }
}
