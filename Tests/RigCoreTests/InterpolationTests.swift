import Foundation
import Testing

@testable import RigCore

@Suite struct InterpolationTests {
    static let all: [Interpolation] =
        [.linear, .bezier(x1: 0.25, y1: 0.1, x2: 0.25, y2: 1), .bezier(x1: 0.3, y1: -0.4, x2: 0.7, y2: 1.4)]
        + Easing.names.compactMap { Interpolation(name: $0) }

    @Test(arguments: all) func runsFromZeroToOne(_ interpolation: Interpolation) {
        #expect(abs(interpolation.progress(0)) < 1e-12)
        #expect(abs(interpolation.progress(1) - 1) < 1e-12)
    }

    @Test func easingsAtHandComputedPoints() {
        func p(_ name: String, _ u: Double) -> Double { Interpolation(name: name)?.progress(u) ?? .nan }
        #expect(abs(p("easeInQuad", 0.5) - 0.25) < 1e-12)  // u²
        #expect(abs(p("easeOutQuad", 0.5) - 0.75) < 1e-12)  // 1 − (1−u)²
        #expect(abs(p("easeInCubic", 0.5) - 0.125) < 1e-12)  // u³
        #expect(abs(p("easeOutCubic", 0.5) - 0.875) < 1e-12)
        #expect(abs(p("easeInSine", 0.5) - (1 - 0.5.squareRoot())) < 1e-12)  // 1 − cos(π/4)
        #expect(abs(p("easeOutSine", 0.5) - 0.5.squareRoot()) < 1e-12)  // sin(π/4)
        #expect(abs(p("easeInOutCubic", 0.25) - 0.0625) < 1e-12)  // (2u)³/2
        #expect(abs(p("easeInOutQuad", 0.75) - 0.875) < 1e-12)  // 1 − (2−2u)²/2
        for name in Easing.names where name.hasPrefix("easeInOut") {
            #expect(abs(p(name, 0.5) - 0.5) < 1e-12, "\(name) is symmetric")
        }
    }

    @Test func namesParseToTheRightEasing() {
        #expect(Interpolation(name: "easeInOutSine") == .ease(Easing(mode: .easeInOut, curve: .sine)))
        #expect(Interpolation(name: "easeOutCubic") == .ease(Easing(mode: .easeOut, curve: .cubic)))
        #expect(Interpolation(name: "easeIn") == nil)
        #expect(Interpolation(name: "easeInOut") == nil)
        #expect(Interpolation(name: "bezier") == nil, "handles are read by the parser")
        #expect(Interpolation.names.count == 4 + 9)
    }

    @Test func bezierMatchesTheCSSCurves() {
        // (0,0,1,1) is the identity.
        for u in stride(from: 0.0, through: 1, by: 0.05) {
            #expect(abs(cubicBezier(u, 0, 0, 1, 1) - u) < 1e-9)
        }
        // CSS "ease" = (0.25, 0.1, 0.25, 1): at x = 0.5 the curve parameter is s ≈ 0.4, where
        // x(s) = 3(1−s)²s·0.25 + 3(1−s)s²·0.25 + s³. Recompute y at the solved s independently.
        var lo = 0.0
        var hi = 1.0
        for _ in 0..<200 {
            let s = (lo + hi) / 2
            let x = 3 * (1 - s) * (1 - s) * s * 0.25 + 3 * (1 - s) * s * s * 0.25 + s * s * s
            if x < 0.5 { lo = s } else { hi = s }
        }
        let s = lo
        let y = 3 * (1 - s) * (1 - s) * s * 0.1 + 3 * (1 - s) * s * s * 1 + s * s * s
        #expect(abs(cubicBezier(0.5, 0.25, 0.1, 0.25, 1) - y) < 1e-9)
        #expect(abs(y - 0.8024) < 1e-3, "the published value of ease(0.5)")
        // Handles outside 0…1 in y overshoot: "back" style curve goes below 0 early on.
        #expect(cubicBezier(0.1, 0.3, -0.5, 0.7, 1.5) < 0)
        #expect(cubicBezier(0.9, 0.3, -0.5, 0.7, 1.5) > 1)
    }

    @Test func segmentEndpointsAreTheKeys() {
        for interpolation in Self.all + [.smooth] {
            let track = AxisTrack(keys: [Keyframe(time: 2, value: -7, interpolation: interpolation), Keyframe(time: 5, value: 33)])
            #expect(abs(track.value(at: 2) - -7) < 1e-12)
            #expect(abs(track.value(at: 5 - 1e-12) - 33) < 1e-6)
            #expect(track.value(at: 5) == 33)
        }
        let hold = AxisTrack(keys: [Keyframe(time: 0, value: 1, interpolation: .hold), Keyframe(time: 1, value: 2)])
        #expect(hold.value(at: 0.999) == 1)
        #expect(hold.value(at: 1) == 2)
    }
}

extension Interpolation: CustomTestStringConvertible {
    public var testDescription: String { "\(self)" }
}
