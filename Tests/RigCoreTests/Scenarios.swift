import PropertyBased

@testable import RigCore
@testable import RigSky

/// A random rig, a random program for it and a random start pose.
struct Scenario: Sendable, CustomStringConvertible {
    var seed: UInt64
    var rig: Rig
    var motion: Motion
    var startPose: [Double]

    var description: String { "Scenario(seed: \(seed)) \(rig.axes.count) axes at \(rig.loopRateHz) Hz" }

    static let generator = Generator(run: { rng in
        let seed = rng.next()
        return Scenario.make(seed: seed, stepped: nil)
    })

    static func make(seed: UInt64, stepped: Bool?) -> Scenario {
        var g = SplitMix64(seed: seed)
        let rig = randomRig(&g)
        let start = rig.axes.map { axis in
            Bool.random(using: &g) ? axis.home : Double.random(in: axis.softMin...axis.softMax, using: &g)
        }
        let isStepped = stepped ?? (Double.random(in: 0..<1, using: &g) < 0.3)
        let motion = isStepped ? randomSteps(rig, &g) : randomKeyframes(rig, &g)
        return Scenario(seed: seed, rig: rig, motion: motion, startPose: start)
    }

    static func randomRig(_ g: inout SplitMix64) -> Rig {
        let count = Int.random(in: 1...4, using: &g)
        let axes = (0..<count).map { i in
            let softMin = Double.random(in: -120 ... -5, using: &g)
            let softMax = Double.random(in: 5...120, using: &g)
            return servoAxis(
                "a\(i)", channel: i, softMin: softMin, softMax: softMax,
                home: Double.random(in: softMin...softMax, using: &g),
                park: Bool.random(using: &g) ? Double.random(in: softMin...softMax, using: &g) : nil,
                maxVelocity: Double.random(in: 10...300, using: &g),
                maxAcceleration: Double.random(in: 20...1000, using: &g))
        }
        let rates: [Double] = [20, 50, 100, 200, Double.random(in: 20...500, using: &g)]
        return simRig(axes, loopRateHz: rates.randomElement(using: &g) ?? 100)
    }

    /// A position mostly inside the soft limits, sometimes a little outside.
    static func position(_ axis: Axis, _ g: inout SplitMix64) -> Double {
        let span = axis.softMax - axis.softMin
        if Double.random(in: 0..<1, using: &g) < 0.05 {
            return Bool.random(using: &g)
                ? axis.softMax + span * Double.random(in: 0.001...0.1, using: &g)
                : axis.softMin - span * Double.random(in: 0.001...0.1, using: &g)
        }
        return Double.random(in: axis.softMin...axis.softMax, using: &g)
    }

    static func randomInterpolation(_ g: inout SplitMix64) -> Interpolation {
        let r = Double.random(in: 0..<1, using: &g)
        switch r {
        case ..<0.55: return .smooth
        case ..<0.65: return .linear
        case ..<0.72: return .hold
        case ..<0.86:
            return .bezier(
                x1: Double.random(in: 0...1, using: &g), y1: Double.random(in: -0.5...1.5, using: &g),
                x2: Double.random(in: 0...1, using: &g), y2: Double.random(in: -0.5...1.5, using: &g))
        default:
            let mode = Easing.Mode.allCases.randomElement(using: &g) ?? .easeInOut
            let curve = Easing.Curve.allCases.randomElement(using: &g) ?? .sine
            return .ease(Easing(mode: mode, curve: curve))
        }
    }

    /// Keys spaced by the axis's limits: a smooth segment of distance d needs about
    /// 1.5·d/vmax (peak velocity of a cubic with zero end slopes) and √(6·d/amax) (its
    /// peak acceleration); a random factor around 1 gives both feasible and infeasible paths.
    static func randomKeyframes(_ rig: Rig, _ g: inout SplitMix64) -> Motion {
        var tracks = [AxisTrack?](repeating: nil, count: rig.axes.count)
        let forced = Int.random(in: 0..<rig.axes.count, using: &g)
        for (i, axis) in rig.axes.enumerated() where i == forced || Double.random(in: 0..<1, using: &g) < 0.7 {
            var keys: [Keyframe] = []
            var time = Bool.random(using: &g) ? 0 : Double.random(in: 0...1.5, using: &g)
            var value = position(axis, &g)
            let count = Int.random(in: 1...6, using: &g)
            for k in 0..<count {
                let interpolation = randomInterpolation(&g)
                keys.append(Keyframe(time: time, value: value, interpolation: interpolation))
                guard k < count - 1 else { break }
                var next = position(axis, &g)
                if interpolation == .hold, Bool.random(using: &g) { next = value }
                if Double.random(in: 0..<1, using: &g) < 0.1 { next = value }
                let d = abs(next - value)
                let base = max(1.5 * d / axis.maxVelocity, (6 * d / axis.maxAcceleration).squareRoot(), 0.05)
                time += base * Double.random(in: 0.7...3, using: &g)
                value = next
            }
            tracks[i] = AxisTrack(keys: keys)
        }
        let duration = tracks.compactMap { $0?.endTime }.max() ?? 0
        return .continuous(tracks: tracks, durationSeconds: duration)
    }

    static func randomSteps(_ rig: Rig, _ g: inout SplitMix64) -> Motion {
        let count = Int.random(in: 1...6, using: &g)
        var steps: [Step] = []
        for k in 0..<count {
            // Sometimes the same pose again (an empty move), sometimes only one axis moves.
            var pose = rig.axes.map { position($0, &g) }
            if let last = steps.last?.pose {
                let r = Double.random(in: 0..<1, using: &g)
                if r < 0.15 {
                    pose = last
                } else if r < 0.3 {
                    let keep = pose[0]
                    pose = last
                    pose[0] = keep
                }
            }
            steps.append(
                Step(
                    pose: pose, settleSeconds: Bool.random(using: &g) ? 0 : Double.random(in: 0...0.5, using: &g),
                    label: "step \(k + 1)"))
        }
        return .stepped(steps)
    }
}
