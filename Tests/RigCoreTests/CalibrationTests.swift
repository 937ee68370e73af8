import PropertyBased
import Testing

@testable import RigCore
@testable import RigSky

@Suite struct CalibrationTests {
    func make(_ points: [(Double, Double)], inverted: Bool = false) -> Result<Calibration, CalibrationProblem> {
        Calibration.make(points: points.map { (angleDeg: $0.0, pulseMicroseconds: $0.1) }, inverted: inverted)
    }

    @Test func multiPointIsPiecewiseLinear() throws {
        // Unsorted on purpose: the table sorts by angle. Segments: −90…0 at 10 µs/°, 0…90 at 5 µs/°.
        let c = try make([(90, 1950), (-90, 600), (0, 1500)]).get()
        #expect(c.angles == [-90, 0, 90])
        #expect(c.pulseMicroseconds(forAngle: -45) == 1050)
        #expect(c.pulseMicroseconds(forAngle: 0) == 1500)
        #expect(c.pulseMicroseconds(forAngle: 45) == 1725)
        // Outside the table the end segments extend: 100° → 1950 + 10·5.
        #expect(c.pulseMicroseconds(forAngle: 100) == 2000)
        #expect(c.pulseMicroseconds(forAngle: -100) == 500)
        #expect(c.angleRange == -90...90)
    }

    @Test func invertedMirrorsThePulses() throws {
        // 1000…2000 µs mirrored: −90° → 2000, 90° → 1000, 45° → 1250.
        let c = try make([(-90, 1000), (90, 2000)], inverted: true).get()
        #expect(c.pulseMicroseconds(forAngle: -90) == 2000)
        #expect(c.pulseMicroseconds(forAngle: 90) == 1000)
        #expect(c.pulseMicroseconds(forAngle: 45) == 1250)
        #expect(c.angle(forPulseMicroseconds: 1250) == 45)
    }

    @Test func inverseUndoesTheMapping() async {
        let tables = Generator(run: { rng in
            var g = SplitMix64(seed: rng.next())
            let count = Int.random(in: 2...6, using: &g)
            var angle = Double.random(in: -180 ... -30, using: &g)
            var pulse = Double.random(in: 500...1000, using: &g)
            let falling = Bool.random(using: &g)
            var points: [(Double, Double)] = []
            for _ in 0..<count {
                points.append((angle, falling ? 3000 - pulse : pulse))
                angle += Double.random(in: 5...60, using: &g)
                pulse += Double.random(in: 20...400, using: &g)
            }
            return (points.map(\.0), points.map(\.1), Bool.random(using: &g), Double.random(in: 0...1, using: &g))
        })
        await propertyCheck(count: 200, input: tables) { angles, pulses, inverted, u in
            guard case .success(let c) = make(Array(zip(angles, pulses)), inverted: inverted) else {
                Issue.record("a strictly monotonic table was rejected")
                return
            }
            let angle = c.angleRange.lowerBound + u * (c.angleRange.upperBound - c.angleRange.lowerBound)
            let back = c.angle(forPulseMicroseconds: c.pulseMicroseconds(forAngle: angle))
            #expect(abs(back - angle) < 1e-9 * (abs(angle) + 1))
        }
    }

    @Test func badTablesAreRejected() {
        #expect(make([(0, 1500)]) == .failure(.tooFewPoints))
        #expect(make([(0, 1500), (0, 1600)]) == .failure(.duplicateAngle(0)))
        #expect(make([(-90, 1000), (0, 1600), (90, 1400)]) == .failure(.notMonotonic))
        #expect(make([(-90, 1000), (0, 1000)]) == .failure(.notMonotonic))
    }
}
