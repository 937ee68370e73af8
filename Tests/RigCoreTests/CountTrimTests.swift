import Foundation
import RigSky
import Testing

@testable import RigCore
@testable import RigFormat

/// The one-count trim: a shaped move's counts leave a residual ringing; the trim's pulse
/// pair cancels it on the payload's model, within the soft limits, and only where a count
/// is latched every tick.
@Suite struct CountTrimTests {
    static let tickSeconds = 0.005
    /// A PCA9685 at 200 Hz: a count latched every 5 ms tick.
    static let period200 = 5_000.0

    static func axis(frequencyHz: Double, damping: Double, kind: ShaperConfig.Kind = .zv, softMin: Double = -85, softMax: Double = 85) -> Axis {
        var axis = servoAxis("pan", channel: 0, softMin: softMin, softMax: softMax, maxVelocity: 180, maxAcceleration: 720)
        axis.calibration = try? Calibration.make(points: [(-90, 500), (90, 2500)], inverted: false).get()
        axis.shaper = ShaperConfig(kind: kind, frequencyHz: frequencyHz, damping: damping)
        return axis
    }

    /// What a shaped move from `from` to `to` leaves: each tick's commanded pulse rounded to
    /// whole counts (as the output does), trimmed when `trim` is given, played on the
    /// payload (the shaper's frequency and damping), the camera at rest on the pulse sent at
    /// the start (`CountTrim.start`, as the outputs call it); with `lookAhead` the trim is
    /// told the move's coming pulses on its first tick (`expect`, as the loop does for a
    /// planned move). Returns the rate amplitude of the ringing at the end (two ringing
    /// periods after the move), the pulses sent, the ticks trimmed, and the last tick
    /// trimmed after the move's last change (negative: before it; nil: none).
    static func play(
        _ axis: Axis, from: Double, to: Double, periodMicroseconds: Double = period200, trim: CountTrim?, lookAhead: Bool = false
    ) -> (residual: Double, sentAngles: [Double], trimmedTicks: Int, lastTrimmed: Int?, atArrival: Double) {
        var trim = trim
        let shaper = axis.shaper!
        let payload = Payload(frequencyHz: shaper.frequencyHz, damping: shaper.damping)
        let calibration = axis.calibration!
        func q(_ us: Double) -> Double { (us / periodMicroseconds * 4096).rounded() / 4096 * periodMicroseconds }
        var shaping = InputShaper(axes: [axis], tickSeconds: tickSeconds, startPose: [from])
        // A smooth reference move (a raised cosine over 0.3 s), then the shaper's tail and
        // two ringing periods of holding.
        let moveTicks = 60
        let holdTicks = shaping.tailTicks + Int(2 / (payload.frequencyHz * tickSeconds)) + 10
        var out = [from]
        var pulses: [Double] = []
        for k in 0..<(moveTicks + holdTicks) {
            let s = min(Double(k + 1) / Double(moveTicks), 1)
            shaping.shape([from + (to - from) * (1 - cos(Double.pi * s)) / 2], into: &out)
            pulses.append(calibration.pulseMicroseconds(forAngle: out[0]))
        }
        let first = q(calibration.pulseMicroseconds(forAngle: from))
        var camera = PayloadResponse(payload: payload, tickSeconds: tickSeconds, angle: calibration.angle(forPulseMicroseconds: first))
        trim?.start(axis: 0, quantizedMicroseconds: first)
        // The move's last change (tick index).
        var arrival = 0
        for k in pulses.indices.dropFirst() where pulses[k] != pulses[k - 1] { arrival = k }
        var sent: [Double] = []
        var trimmed = 0
        var lastTrimmed: Int?
        let w = 2 * Double.pi * payload.frequencyHz
        let final = calibration.angle(forPulseMicroseconds: q(pulses[pulses.count - 1]))
        var atArrival = 0.0
        for (k, us) in pulses.enumerated() {
            let counts = trim?.counts(axis: 0, commandedMicroseconds: us, quantizedMicroseconds: q(us)) ?? 0
            if counts != 0 {
                trimmed += 1
                lastTrimmed = k - arrival
            }
            if lookAhead, k == 0, arrival > 0 { trim?.expect(axis: 0, ticks: arrival) { (pulses[$0], q(pulses[$0])) } }
            let angle = calibration.angle(forPulseMicroseconds: q(us) + Double(counts) * periodMicroseconds / 4096)
            sent.append(angle)
            camera.step(horn: angle)
            if k == arrival {
                let e = camera.angle - final
                atArrival = (camera.rate * camera.rate + w * w * e * e).squareRoot()
            }
        }
        let e = camera.angle - final
        return ((camera.rate * camera.rate + w * w * e * e).squareRoot(), sent, trimmed, lastTrimmed, atArrival)
    }

    static func uniform(_ g: inout SplitMix64, _ range: ClosedRange<Double>) -> Double {
        range.lowerBound + Double(g.next() >> 11) / Double(1 << 53) * (range.upperBound - range.lowerBound)
    }

    /// Over random payloads (2–8 Hz, ζ 0.01–0.08), shapers and moves (some ending on a soft
    /// limit), planned when the frames stop and with the move's pulses known ahead: a move
    /// whose counts leave the ringing below the goal when its frames stop is not trimmed;
    /// else the trimmed counts leave it below the goal, or at most half the untrimmed one,
    /// or (where one count's pulse cannot halve it) the move is left alone; never more than
    /// the untrimmed counts leave, and no pulse is sent outside the soft limits the
    /// untrimmed rounding kept. Of the moves whose ringing is within a count's reach (a
    /// pulse's response is at most 2 counts × ω), nearly all end below the goal; known
    /// ahead, the pulse never ends later and mostly ends earlier.
    @Test func theTrimLeavesEachMovesRingingBelowTheGoalWithinTheSoftLimits() throws {
        var g = SplitMix64(seed: 36)
        let goal = 0.25
        var belowGoal = 0
        var cases = 0
        var earlier = 0
        var bothTrimmed = 0
        for _ in 0..<60 {
            let f = Self.uniform(&g, 2...8)
            let z = Self.uniform(&g, 0.01...0.08)
            let kind = ShaperConfig.Kind.allCases[Int(g.next() % 4)]
            let softMax = Self.uniform(&g, 30...85)
            let axis = Self.axis(frequencyHz: f, damping: z, kind: kind, softMin: -softMax, softMax: softMax)
            let from = Self.uniform(&g, -softMax...softMax)
            let to = g.next() % 3 == 0 ? softMax : Self.uniform(&g, -softMax...softMax)
            let trim = try #require(CountTrim(axes: [axis], tickSeconds: Self.tickSeconds, periodMicroseconds: Self.period200, goalDegreesPerSecond: goal))
            let plain = Self.play(axis, from: from, to: to, trim: nil)
            let causal = Self.play(axis, from: from, to: to, trim: trim)
            let ahead = Self.play(axis, from: from, to: to, trim: trim, lookAhead: true)
            // One count, degrees, and the largest ringing a pulse of it can answer.
            let count = Self.period200 / 4096 * 180 / 2000
            let reach = 2 * count * 2 * Double.pi * f
            for (trimmed, how) in [(causal, "causal"), (ahead, "ahead")] {
                let what = "\(how): \(kind) at \(f) Hz, ζ \(z), \(from)° → \(to)° (soft ±\(softMax)°)"
                #expect(trimmed.residual <= max(plain.residual, goal) * 1.0001, "\(what): \(trimmed.residual) °/s trimmed, \(plain.residual) untrimmed")
                if plain.atArrival <= goal {
                    #expect(trimmed.trimmedTicks == 0, "\(what): trimmed a ringing already below the goal")
                } else if trimmed.trimmedTicks > 0 {
                    #expect(trimmed.residual <= goal || trimmed.residual <= plain.residual / 2, "\(what): \(trimmed.residual) °/s left of \(plain.residual)")
                } else {
                    #expect(trimmed.residual == plain.residual)
                }
                if plain.atArrival <= reach {
                    cases += 1
                    if trimmed.residual <= goal { belowGoal += 1 }
                }
                for (a, b) in zip(trimmed.sentAngles, plain.sentAngles) {
                    #expect(a >= min(-softMax, b) && a <= max(softMax, b), "\(what): sent \(a)° outside ±\(softMax)°")
                }
            }
            if let c = causal.lastTrimmed, let a = ahead.lastTrimmed {
                bothTrimmed += 1
                #expect(a <= c, "\(kind) at \(f) Hz: the pulse known ahead ends \(a) ticks after the move, the causal one \(c)")
                if a < c { earlier += 1 }
            }
        }
        // The trim is the lever: nearly every move ends still enough (the untrimmed counts
        // leave most above the goal).
        #expect(cases >= 40 && belowGoal >= cases * 9 / 10, "\(belowGoal) of \(cases) within reach below the goal")
        #expect(bothTrimmed >= 10 && earlier >= bothTrimmed / 2, "\(earlier) of \(bothTrimmed) trims ended earlier when known ahead")
    }

    /// Each tick's trim (counts) of `pulses` sent on a fresh trim started on the first,
    /// told on the first tick that the frames stop changing after tick `announced.count − 1`
    /// with those pulses, when `announced` is given.
    static func replay(_ axis: Axis, pulses: [Double], announced: [Double]?) throws -> [Int] {
        func q(_ us: Double) -> Double { (us / Self.period200 * 4096).rounded() / 4096 * Self.period200 }
        var trim = try #require(CountTrim(axes: [axis], tickSeconds: Self.tickSeconds, periodMicroseconds: Self.period200, goalDegreesPerSecond: 0.25))
        trim.start(axis: 0, quantizedMicroseconds: q(pulses[0]))
        var counts: [Int] = []
        for (k, us) in pulses.enumerated() {
            counts.append(trim.counts(axis: 0, commandedMicroseconds: us, quantizedMicroseconds: q(us)))
            if k == 0, let announced { trim.expect(axis: 0, ticks: announced.count - 1) { (announced[$0], q(announced[$0])) } }
        }
        return counts
    }

    /// Pulses other than the announced ones (a move stopped in its last ringing period)
    /// drop the plan made on them: the trim is then exactly the one planned when the frames
    /// stop, as if nothing had been announced.
    @Test func framesOtherThanTheAnnouncedDropThePlan() throws {
        let axis = Self.axis(frequencyHz: 3, damping: 0.03)
        let calibration = axis.calibration!
        let span = Int((1 / (3 * Self.tickSeconds)).rounded(.up))
        var startedEarly = 0
        var cases = 0
        for end in stride(from: 20.0, through: 21, by: 0.05) {
            var shaping = InputShaper(axes: [axis], tickSeconds: Self.tickSeconds, startPose: [0])
            var out = [0.0]
            var pulses: [Double] = []
            for k in 0..<300 {
                shaping.shape([end * (1 - cos(Double.pi * min(Double(k + 1) / 60, 1))) / 2], into: &out)
                pulses.append(calibration.pulseMicroseconds(forAngle: out[0]))
            }
            var arrival = 0
            for k in pulses.indices.dropFirst() where pulses[k] != pulses[k - 1] { arrival = k }
            let announced = Array(pulses[0...arrival])
            let asAnnounced = try Self.replay(axis, pulses: pulses, announced: announced)
            guard let first = asAnnounced.firstIndex(where: { $0 != 0 }), first <= arrival else { continue }
            startedEarly += 1
            // Stopped (held) at the tick the plan was made on.
            let cut = max(1, arrival - span)
            let held = pulses.indices.map { pulses[min($0, cut)] }
            cases += 1
            #expect(try Self.replay(axis, pulses: held, announced: announced) == Self.replay(axis, pulses: held, announced: nil), "to \(end)°")
        }
        #expect(startedEarly > 0, "some moves' pulses start before their frames stop")
        #expect(cases == startedEarly)
    }

    @Test func aMoveEndingOnTheSoftLimitIsTrimmedOnlyInward() throws {
        // A move whose counts ring and end on the limit: the trim that would go past it is not tried.
        var trimmedOutward = 0
        var trimmedAtAll = 0
        for end in stride(from: 40.0, through: 41, by: 0.05) {
            let axis = Self.axis(frequencyHz: 3, damping: 0.03, softMin: -end, softMax: end)
            let trim = try #require(CountTrim(axes: [axis], tickSeconds: Self.tickSeconds, periodMicroseconds: Self.period200, goalDegreesPerSecond: 0.25))
            let plain = Self.play(axis, from: 0, to: end, trim: nil)
            let run = Self.play(axis, from: 0, to: end, trim: trim)
            if run.trimmedTicks > 0 { trimmedAtAll += 1 }
            for (a, b) in zip(run.sentAngles, plain.sentAngles) where a != b && a > end { trimmedOutward += 1 }
        }
        #expect(trimmedOutward == 0)
        #expect(trimmedAtAll > 0, "some of these moves need a trim (inward)")
    }

    @Test func offAt50HzWithoutAShaperOrWithTrimFalse() throws {
        let shaped = Self.axis(frequencyHz: 3, damping: 0.03)
        #expect(CountTrim(axes: [shaped], tickSeconds: Self.tickSeconds, periodMicroseconds: 20_000, goalDegreesPerSecond: 0.25) == nil)
        #expect(CountTrim(axes: [shaped], tickSeconds: 0.01, periodMicroseconds: Self.period200, goalDegreesPerSecond: 0.25) == nil)
        var unshaped = shaped
        unshaped.shaper = nil
        #expect(CountTrim(axes: [unshaped], tickSeconds: Self.tickSeconds, periodMicroseconds: Self.period200, goalDegreesPerSecond: 0.25) == nil)
        var off = shaped
        off.shaper?.trim = false
        #expect(CountTrim(axes: [off], tickSeconds: Self.tickSeconds, periodMicroseconds: Self.period200, goalDegreesPerSecond: 0.25) == nil)
        // A mixed rig trims only its shaped servo axis, and asking about another is a no-op.
        var trim = try #require(
            CountTrim(axes: [unshaped, shaped], tickSeconds: Self.tickSeconds, periodMicroseconds: Self.period200, goalDegreesPerSecond: 0.25))
        #expect(!trim.trims(axis: 0) && trim.trims(axis: 1))
        for us in stride(from: 1500.0, through: 1700, by: 1) { #expect(trim.counts(axis: 0, commandedMicroseconds: us, quantizedMicroseconds: us) == 0) }
        // The rig file's key.
        func shaper(_ text: String) throws -> ShaperConfig {
            try ShaperConfig.parse(ValueReader(JSONParser.parse(text), JSONContext(file: "t.json")))
        }
        #expect(try shaper(#"{"type": "zv", "frequencyHz": 3, "trim": false}"#).trim == false)
        #expect(try shaper(#"{"type": "zv", "frequencyHz": 3}"#).trim)
    }

    /// A new motion drops a plan: the trim never plays into the next move.
    @Test func aNewMoveCancelsThePlan() throws {
        let axis = Self.axis(frequencyHz: 3, damping: 0.03)
        var found = false
        for end in stride(from: 10.0, through: 11, by: 0.05) where !found {
            var trim = try #require(CountTrim(axes: [axis], tickSeconds: Self.tickSeconds, periodMicroseconds: Self.period200, goalDegreesPerSecond: 0.25))
            let calibration = axis.calibration!
            func q(_ us: Double) -> Double { (us / Self.period200 * 4096).rounded() / 4096 * Self.period200 }
            // A small step (a few hundredths of a degree: its ringing within one count's
            // reach), then the same pulse until the trim plans.
            for k in 0..<3 {
                let us = calibration.pulseMicroseconds(forAngle: end - 0.06 * Double(2 - k) / 2)
                _ = trim.counts(axis: 0, commandedMicroseconds: us, quantizedMicroseconds: q(us))
            }
            let us = calibration.pulseMicroseconds(forAngle: end)
            _ = trim.counts(axis: 0, commandedMicroseconds: us, quantizedMicroseconds: q(us))
            guard trim.isTrimming else { continue }
            found = true
            // The next tick moves on: the plan is gone, nothing is trimmed after.
            for k in 1...200 {
                let next = calibration.pulseMicroseconds(forAngle: end + Double(k) * 0.5)
                #expect(trim.counts(axis: 0, commandedMicroseconds: next, quantizedMicroseconds: q(next)) == 0)
            }
            #expect(!trim.isTrimming)
        }
        #expect(found, "some step leaves a ringing to trim")
    }
}

/// The look-ahead the loop hands the trim: at each move's start (and the first tick) the player tells the ticks
/// until the move's frames stop changing and the last of those frames, exactly as it then
/// plays them.
@Suite struct FramesAheadTests {
    @Test func thePlayerTellsEachMovesFramesAsItThenPlaysThem() {
        var pan = servoAxis("pan", channel: 0, maxVelocity: 200, maxAcceleration: 2000)
        pan.shaper = ShaperConfig(kind: .zv, frequencyHz: 3, damping: 0.03)
        var tilt = servoAxis("tilt", channel: 1, maxVelocity: 90, maxAcceleration: 400)
        tilt.shaper = ShaperConfig(kind: .mzv, frequencyHz: 5, damping: 0.05)
        let rig = simRig([pan, tilt], loopRateHz: 200)
        let poses: [[Double]] = [[30, 10], [-20, 5], [-20, 5], [0, -10], [0, 20]]
        let steps = poses.enumerated().map { Step(pose: $1, settleSeconds: 0.1, label: "\($0 + 1)") }
        var player = Player(rig: rig, motion: .stepped(steps), startPose: [0, 0])
        let window = 20
        var rows = [Double](repeating: .nan, count: window * 2)
        var frame = [0.0, 0]
        var frames: [[Double]] = []
        var told: [(tick: Int, ticks: Int, rows: [Double])] = []
        while !player.isFinished, frames.count < 20_000 {
            let event = player.tick(into: &frame)
            frames.append(frame)
            switch event {
            // The first move starts with the program (no event), as the loop knows.
            case _ where frames.count == 1, .moveStarted?: told.append((frames.count - 1, player.framesAhead(into: &rows, window: window), rows))
            case .ready?: player.advance()
            default: break
            }
        }
        #expect(told.count == poses.count)
        var moves = 0
        for (t, n, rows) in told {
            guard n > 0 else {
                // Nothing to move: the frames stay.
                #expect(frames[t + 1] == frames[t])
                continue
            }
            moves += 1
            #expect(frames[t + n] != frames[t + n - 1], "the move's last change is tick \(n)")
            let rest = frames[t + n]
            #expect(frames[(t + n)...].prefix(while: { $0 == rest }).count > 10, "then the frames stay")
            for k in max(1, n - window + 1)...n {
                let row = (k - 1) % window
                #expect(Array(rows[(row * 2)..<(row * 2 + 2)]) == frames[t + k], "tick \(k) of \(n)")
            }
        }
        #expect(moves == poses.count - 1)
    }

    /// A move longer than the look-ahead (`Player.lookAheadSeconds`) is not told (the
    /// trim plans when its frames stop); one just within it is, to its last tick.
    @Test func aMoveLongerThanTheLookAheadIsNotTold() {
        func told(degrees: Double) -> (told: Int, lastChange: Int) {
            var pan = servoAxis("pan", channel: 0, softMin: -170, softMax: 170, maxVelocity: 10, maxAcceleration: 100)
            pan.shaper = ShaperConfig(kind: .zv, frequencyHz: 3, damping: 0.03)
            let rig = simRig([pan], loopRateHz: 200)
            var player = Player(rig: rig, motion: .stepped([Step(pose: [degrees], settleSeconds: 0.1, label: "1")]), startPose: [0])
            var frame = [0.0]
            var rows = [Double](repeating: .nan, count: 4)
            _ = player.tick(into: &frame)
            let n = player.framesAhead(into: &rows, window: 4)
            var previous = frame
            var tick = 0
            var lastChange = 0
            while tick < 5000 {
                tick += 1
                _ = player.tick(into: &frame)
                if frame != previous { lastChange = tick }
                previous = frame
            }
            return (n, lastChange)
        }
        // 95° at 10 °/s: 9.6 s and the shaper's 1/6 s, within 10 s.
        let within = told(degrees: 95)
        #expect(within.told == within.lastChange && within.told > 1900, "\(within)")
        // 120°: 12.1 s.
        #expect(told(degrees: 120).told == 0)
    }
}
