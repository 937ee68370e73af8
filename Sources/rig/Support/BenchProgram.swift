import RigCore
import RigFormat

/// The programs `rig bench` plays, written as program files (with the rig embedded) so
/// they go through the same parser and check as a user's.
enum BenchProgram {
    /// A pan/tilt rig on the simulated output.
    static func rig(rateHz: Double) -> String {
        """
        {"name": "bench pan/tilt (simulated)", "loopRateHz": \(number(rateHz)), "output": {"type": "sim"}, "axes": [
          {"name": "pan", "channel": 0, "pulseUs": [500, 2500], "angleDeg": [-90, 90], "softLimits": [-85, 85],
           "maxVelocity": 90, "maxAcceleration": 180},
          {"name": "tilt", "channel": 1, "pulseUs": [1000, 2000], "angleDeg": [-45, 45], "softLimits": [-40, 45],
           "maxVelocity": 60, "maxAcceleration": 120}]}
        """
    }

    /// A keyframe program of `seconds` (≥ one tick): pan swings ±30° with `smooth` keys and
    /// tilt ±15° with `easeInOutSine`, about every 2 s, from and back to home. Swings in
    /// shorter programs are smaller, so every one stays within half of each limit.
    static func swings(rateHz: Double, seconds: Double) -> String {
        let segments = max(1, Int((seconds / 2).rounded()))
        let h = seconds / Double(segments)
        // A rest-to-rest segment of Δ over h peaks at ≤ 1.6·Δ/h and ≤ 6·Δ/h² (smooth
        // and sine easing alike); Δ ≤ 2·amplitude, kept under half of each limit.
        func amplitude(_ cap: Double, maxVelocity: Double, maxAcceleration: Double) -> Double {
            min(cap, 0.5 * maxVelocity * h / 3.2, 0.5 * maxAcceleration * h * h / 12)
        }
        func keys(_ amplitude: Double, _ interp: String) -> String {
            (0...segments).map { i in
                let value = i == 0 || i == segments ? 0 : (i % 2 == 1 ? amplitude : -amplitude)
                return "{\"t\": \(number(Double(i) * h)), \"value\": \(number(value)), \"interp\": \"\(interp)\"}"
            }.joined(separator: ", ")
        }
        let pan = keys(amplitude(30, maxVelocity: 90, maxAcceleration: 180), "smooth")
        let tilt = keys(amplitude(15, maxVelocity: 60, maxAcceleration: 120), "easeInOutSine")
        return "{\"rig\": \(rig(rateHz: rateHz)), \"kind\": \"keyframes\", \"keyframes\": {\"pan\": [\(pan)], \"tilt\": [\(tilt)]}}"
    }

    /// The shortest program: both axes hold home, so the first frame is nearly the last.
    static func firstFrameOnly(rateHz: Double) -> String {
        "{\"rig\": \(rig(rateHz: rateHz)), \"kind\": \"keyframes\", \"keyframes\": {\"pan\": [{\"t\": 0, \"value\": 0}]}}"
    }

    /// A stepped program of `steps` short steps for a rig of `rig bench group`: pan goes
    /// between 1° and 2° (about 0.15 s a move), tilt stays home, each step settles 50 ms;
    /// paced by `intervalSeconds` (a group's leader paces the group by it), or as fast as
    /// the group goes.
    static func groupSteps(_ steps: Int, rateHz: Double, intervalSeconds: Double? = nil) -> String {
        let list = (0..<steps).map { "{\"pose\": {\"pan\": \($0 % 2 + 1), \"tilt\": 0}, \"settleSeconds\": 0.05}" }.joined(separator: ", ")
        let trigger = intervalSeconds.map { ", \"trigger\": \"interval:\(number($0))\"" } ?? ""
        return "{\"rig\": \(rig(rateHz: rateHz)), \"kind\": \"steps\"\(trigger), \"steps\": [\(list)]}"
    }

    /// Parses a program written by this enum (its rig is embedded: nothing to load).
    static func parse(_ text: String, file: String) throws(FileError) -> Program {
        try ProgramParser.parse(text: text, file: file) { _, value throws(FileError) in
            throw value.error("bench programs embed their rig")
        }
    }
}
