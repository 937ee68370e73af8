import PropertyBased
import Testing

@testable import RigCore
@testable import RigSky

/// Random all-smooth key lists: uneven spacing, flat stretches, reversals.
private let smoothKeys = Generator(run: { rng in
    var g = SplitMix64(seed: rng.next())
    var keys: [Keyframe] = []
    var time = Double.random(in: 0...3, using: &g)
    var value = Double.random(in: -500...500, using: &g)
    for _ in 0..<Int.random(in: 2...9, using: &g) {
        keys.append(Keyframe(time: time, value: value, interpolation: .smooth))
        time += Double.random(in: 0.01...5, using: &g)
        let r = Double.random(in: 0..<1, using: &g)
        value = r < 0.15 ? value : r < 0.3 ? value + Double.random(in: -0.01...0.01, using: &g) : Double.random(in: -500...500, using: &g)
    }
    return keys
})

@Suite struct AxisTrackTests {
    @Test func smoothSegmentsNeverOvershootTheirKeys() async {
        await propertyCheck(count: 300, input: smoothKeys) { keys in
            let track = AxisTrack(keys: keys)
            for i in 0..<(keys.count - 1) {
                let k0 = keys[i]
                let k1 = keys[i + 1]
                let low = min(k0.value, k1.value)
                let high = max(k0.value, k1.value)
                let eps = 1e-9 * (abs(low) + abs(high) + 1)
                for s in 0...400 {
                    let t = k0.time + (k1.time - k0.time) * Double(s) / 400
                    let x = track.value(at: t)
                    #expect(x >= low - eps && x <= high + eps, "segment \(i) at t=\(t): \(x) outside \(low)…\(high)")
                }
            }
        }
    }

    @Test func velocityIsContinuousAtInteriorSmoothKeys() async {
        await propertyCheck(count: 300, input: smoothKeys) { keys in
            let track = AxisTrack(keys: keys)
            // The one-sided difference quotients differ by about h·|x''|; with h a millionth
            // of the shortest neighbouring segment that is far below the secant slopes, while
            // a kink would differ by the order of the secants themselves.
            for i in 1..<max(1, keys.count - 1) {
                let h0 = keys[i].time - keys[i - 1].time
                let h1 = keys[i + 1].time - keys[i].time
                let h = 1e-6 * min(h0, h1)
                let t = keys[i].time
                let left = (track.value(at: t) - track.value(at: t - h)) / h
                let right = (track.value(at: t + h) - track.value(at: t)) / h
                let s0 = (keys[i].value - keys[i - 1].value) / h0
                let s1 = (keys[i + 1].value - keys[i].value) / h1
                let scale = max(abs(s0), abs(s1), 1)
                #expect(abs(left - right) <= 1e-3 * scale, "key \(i): left \(left), right \(right)")
            }
        }
    }

    @Test func theContinuityProbeDetectsAKink() {
        // Sanity check of the probe above: linear into linear has a corner at t = 1.
        let keys = [
            Keyframe(time: 0, value: 0, interpolation: .linear), Keyframe(time: 1, value: 10, interpolation: .linear),
            Keyframe(time: 2, value: 0),
        ]
        let track = AxisTrack(keys: keys)
        let h = 1e-6
        let left = (track.value(at: 1) - track.value(at: 1 - h)) / h
        let right = (track.value(at: 1 + h) - track.value(at: 1)) / h
        #expect(abs(left - 10) < 1e-3 && abs(right + 10) < 1e-3)
    }

    @Test func startsAndEndsAtRestAndHoldsOutsideTheKeys() {
        let track = AxisTrack(keys: [Keyframe(time: 1, value: -20), Keyframe(time: 3, value: 40), Keyframe(time: 4, value: 10)])
        #expect(track.value(at: 0) == -20)
        #expect(track.value(at: 1) == -20)
        #expect(track.value(at: 3) == 40)
        #expect(track.value(at: 9) == 10)
        let h = 1e-5
        #expect(abs(track.value(at: 1 + h) - track.value(at: 1)) / h < 1e-2)
        #expect(abs(track.value(at: 4) - track.value(at: 4 - h)) / h < 1e-2)
        // 40 is a local maximum: slope zero there, so the path does not rise above it.
        #expect(track.tangents[1] == 0)
    }

    @Test func cursorSamplingMatchesFreshSampling() {
        let track = AxisTrack(keys: [
            Keyframe(time: 0, value: 0), Keyframe(time: 1, value: 5, interpolation: .linear),
            Keyframe(time: 2, value: 7, interpolation: .ease(Easing(mode: .easeInOut, curve: .cubic))),
            Keyframe(time: 4, value: -3),
        ])
        var cursor = 0
        // Forwards, then jumping backwards: the cursor must find the right segment either way.
        for t in Array(stride(from: -0.5, through: 4.5, by: 0.01)) + Array(stride(from: 4.5, through: -0.5, by: -0.37)) {
            #expect(track.value(at: t, cursor: &cursor) == track.value(at: t))
        }
    }
}
