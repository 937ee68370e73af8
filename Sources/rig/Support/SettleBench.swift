import FoundationEssentials
import RigCore
import RigFormat
import RigRuntime
import RigSky

/// `rig bench settle`'s simulations: a panorama played tick by tick (virtual time, no
/// clock) on the simulated output, its payload ringing on the horn through the whole chain
/// `rig play` simulates (PCA9685 quantization, the spring), the player fed the simulated
/// settle sensor as the control loop feeds it. Deterministic: the figures depend on the
/// model, not on the machine.
enum SettleBench {
    /// The panorama's grid: rows of tilt, columns of pan (serpentine).
    static let tilts: [Double] = [-20, 10, 40]
    static let pans: [Double] = stride(from: -70.0, through: 70, by: 20).map { $0 }
    /// The program's lens: 35 mm on a full-frame sensor, portrait.
    static let lens = FieldOfView(focalLengthMillimetres: 35, sensorWidthMillimetres: 36, sensorHeightMillimetres: 24)

    /// A pan/tilt rig on the simulated output (its PCA9685 at `pwmHz`), both axes carrying
    /// `payload`, shaped by `shaper` when given, settling by the simulated sensor when
    /// `settle` is given.
    /// `jerkRampSeconds` sets each axis's `maxJerk` (its ramp to `maxAcceleration`); nil:
    /// the default (a shaped axis's trapezoids).
    static func rig(
        payload: Payload, shaper: ShaperConfig?, settle: MeasuredSettle?, deadbandDeg: Double = 0, pwmHz: Double = 50, jerkRampSeconds: Double? = nil
    ) -> String {
        var axisExtra = ", \"payload\": {\"frequencyHz\": \(number(payload.frequencyHz)), \"damping\": \(number(payload.damping))}"
        func jerk(_ acceleration: Double) -> String { jerkRampSeconds.map { ", \"maxJerk\": \(number(acceleration / $0))" } ?? "" }
        if deadbandDeg > 0 { axisExtra += ", \"deadbandDeg\": \(number(deadbandDeg))" }
        if let shaper {
            axisExtra +=
                ", \"shaper\": {\"type\": \"\(shaper.kind.rawValue)\", \"frequencyHz\": \(number(shaper.frequencyHz)), \"damping\": \(number(shaper.damping))}"
        }
        var rigExtra = ""
        if let settle {
            rigExtra =
                ", \"settle\": {\"sensor\": \"sim\", \"thresholdDegPerS\": \(number(settle.thresholdDegreesPerSecond)), \"holdSeconds\": \(number(settle.holdSeconds)), \"timeoutSeconds\": \(number(settle.timeoutSeconds))}"
        }
        return """
            {"name": "bench pan/tilt (simulated, with payload)", "loopRateHz": 200, "output": {"type": "sim", "frequencyHz": \(number(pwmHz))}\(rigExtra), "axes": [
              {"name": "pan", "channel": 0, "pulseUs": [500, 2500], "angleDeg": [-90, 90], "softLimits": [-85, 85],
               "maxVelocity": 180, "maxAcceleration": 720\(jerk(720))\(axisExtra)},
              {"name": "tilt", "channel": 1, "pulseUs": [1000, 2000], "angleDeg": [-45, 45], "softLimits": [-40, 45],
               "maxVelocity": 120, "maxAcceleration": 480\(jerk(480))\(axisExtra)}]}
            """
    }

    /// A steps program over the grid (or over `poses`), with a fixed settle of `settleSeconds`.
    static func program(rig: String, poses: [(pan: Double, tilt: Double)], settleSeconds: Double) throws(FileError) -> Program {
        let steps = poses.map { "{\"pose\": {\"pan\": \(number($0.pan)), \"tilt\": \(number($0.tilt))}}" }
        let text =
            "{\"rig\": \(rig), \"kind\": \"steps\", \"settleSeconds\": \(number(settleSeconds)), \"steps\": [\(steps.joined(separator: ", "))]}"
        return try BenchProgram.parse(text, file: "<bench settle program>")
    }

    /// One PCA9685 count of the pan axis (2000 µs over 180°) at `pwmHz`, degrees; the tilt
    /// axis's (1000 µs over 90°) is the same.
    static func countDegrees(pwmHz: Double) -> Double { 1_000_000 / pwmHz / 4096 * 180 / 2000 }

    static var gridPoses: [(pan: Double, tilt: Double)] {
        tilts.enumerated().flatMap { row, tilt in (row % 2 == 0 ? pans : pans.reversed()).map { (pan: $0, tilt: tilt) } }
    }

    struct PanoramaFigures {
        /// Mean seconds per step from the start of its move to the start of its exposure.
        var secondsPerStep: Double
        /// Frames whose blur during the exposure exceeds the limit.
        var blurredFrames: Int
        var frames: Int
        /// The largest blur of any frame, pixels.
        var worstBlurPixels: Double
        /// Steps whose measured settle timed out (the fixed settle applied).
        var timeouts: Int
    }

    /// Plays `program` on the simulated output, each step shot with an exposure of
    /// `exposureSeconds`; blur is the camera's angular excursion during the exposure (all
    /// axes, √Σ) × `pixelsPerDegree`. The lead-in (step 1's move from home) is left out
    /// of the time per step. `envelope`: the settle sensor's verdict by the ringing's
    /// envelope (as the loop runs it for a rig with shapers), else by the hold alone.
    /// `trim`: a one-count trim after each move (`CountTrim`, a prototype the product
    /// does not play).
    static func panorama(
        _ program: Program, exposureSeconds: Double, pixelsPerDegree: Double, blurLimitPixels: Double, envelope: Bool = false, trim: Bool = false
    ) throws -> PanoramaFigures {
        let rig = program.rig
        let start = rig.homePose
        let output = SimOutput(config: try simConfig(rig), rig: rig)
        try output.start(channels: rig.axes.map(OutputChannel.init), initial: rig.axes.indices.map { rig.axes[$0].command(forPosition: start[$0]) })
        var plan = ShootingPlan(
            timing: ShotTiming(
                focusSeconds: 0, shutterHoldSeconds: exposureSeconds, exposureWindowSeconds: exposureSeconds, afterShotSeconds: 0, shotsPerStep: 1))
        plan.measuredSettle = rig.settle
        var player = Player(rig: rig, motion: program.motion, startPose: start, shooting: plan)
        let settle = rig.settle ?? MeasuredSettle(sensor: .sim)
        var detector = envelope ? StillnessDetector(settle, rig: rig) : StillnessDetector(settle)
        let config = try simConfig(rig)
        // The trim's count and its timing need a count latched every tick (a PWM period of one tick).
        let trimming = trim && abs(config.periodMicroseconds / 1_000_000 - rig.tickSeconds) < 1e-9
        let countMicroseconds = SimOutput.countMicroseconds(periodMicroseconds: config.periodMicroseconds)
        var trims: [CountTrim] = []
        var previous = start
        var frame = start
        var commands = rig.axes.indices.map { rig.axes[$0].command(forPosition: start[$0]) }
        var sent = [Double](repeating: 0, count: rig.axes.count)
        var moveStart: [Int: Int] = [:]
        var stepTicks: [Int] = []
        var exposing = false
        var low = start
        var high = start
        var blurs: [Double] = []
        var timeouts = 0
        var ticks = 0
        while !player.isFinished, ticks < Bounds.maxTicks {
            ticks += 1
            let event = player.tick(into: &frame)
            for i in rig.axes.indices { commands[i] = rig.axes[i].command(forPosition: frame[i]) }
            var moving = false
            for i in rig.axes.indices where frame[i] != previous[i] { moving = true }
            previous = frame
            for t in trims where t.ticks.contains(ticks) {
                if case .pulse(let us) = commands[t.axis] { commands[t.axis] = .pulse(microseconds: us + t.counts * countMicroseconds) }
                moving = true
            }
            try output.write(commands, sent: &sent)
            let angles = output.cameraMotion.angles
            if trimming, case .moveStarted? = event {
                // The move's frames are known now (the player is a value: a copy plays them
                // ahead); the trim is planned against the counts they will send.
                var ahead = player
                var next = frame
                var horns: [[Double]] = rig.axes.map { _ in [] }
                var arrived = false
                while !arrived, horns[0].count < Bounds.maxTicks {
                    _ = ahead.tick(into: &next)
                    for i in rig.axes.indices {
                        var angle = next[i]
                        if case .pulse(let us) = rig.axes[i].command(forPosition: next[i]), let calibration = rig.axes[i].calibration {
                            angle = calibration.angle(
                                forPulseMicroseconds: SimOutput.quantized(pulseMicroseconds: us, periodMicroseconds: config.periodMicroseconds))
                        }
                        horns[i].append(angle)
                    }
                    if case .settling = ahead.phase { arrived = true }
                }
                let (cameraAngles, rates) = output.cameraMotion
                trims.removeAll()
                for i in rig.axes.indices {
                    guard let payload = rig.axes[i].payload, let calibration = rig.axes[i].calibration,
                        case .pulse(let us) = rig.axes[i].command(forPosition: next[i])
                    else { continue }
                    let here = calibration.angle(
                        forPulseMicroseconds: SimOutput.quantized(pulseMicroseconds: us, periodMicroseconds: config.periodMicroseconds))
                    let up = calibration.angle(
                        forPulseMicroseconds: SimOutput.quantized(pulseMicroseconds: us + countMicroseconds, periodMicroseconds: config.periodMicroseconds))
                    if let t = CountTrim.plan(
                        axis: i, payload: payload, tickSeconds: rig.tickSeconds, angle: cameraAngles[i], rate: rates[i], hornAhead: horns[i],
                        countDegrees: up - here, goalDegreesPerSecond: 0.5 * settle.thresholdDegreesPerSecond, firstTick: ticks + 1)
                    {
                        trims.append(t)
                    }
                }
            }
            switch event {
            case .moveStarted(let step)?: moveStart[step] = ticks
            case .settled(_, _, let measured)?: if rig.settle != nil, !measured { timeouts += 1 }
            case .shot(.started(let step, _))?:
                if step > 0, let t = moveStart[step] { stepTicks.append(ticks - t) }
                exposing = true
                low = angles
                high = angles
            case .shot(.ended)?:
                exposing = false
                var sum = 0.0
                for i in angles.indices { sum += (high[i] - low[i]) * (high[i] - low[i]) }
                blurs.append(sum.squareRoot() * pixelsPerDegree)
            case .ready?: player.advance()
            default: break
            }
            if blurs.count == player.stepCount { break }
            if exposing {
                for i in angles.indices {
                    low[i] = min(low[i], angles[i])
                    high[i] = max(high[i], angles[i])
                }
            }
            detector.commanded(moving: moving)
            detector.observe(rateDegreesPerSecond: output.rateDegreesPerSecond() ?? .nan, seconds: rig.tickSeconds)
            player.measured(still: detector.isStill)
        }
        output.shutdown(safe: rig.axes.map { _ in .off })
        let mean = stepTicks.isEmpty ? 0 : Double(stepTicks.reduce(0, +)) / Double(stepTicks.count) * rig.tickSeconds
        return PanoramaFigures(
            secondsPerStep: mean, blurredFrames: blurs.filter { $0 > blurLimitPixels }.count, frames: blurs.count,
            worstBlurPixels: blurs.max() ?? 0, timeouts: timeouts)
    }

    /// A one-count trim (prototype): one axis's pulse one count up (or down) over `ticks`,
    /// then back, so the count's two steps cancel the ringing the move's count staircase
    /// leaves (their response has amplitude 2q·|sin(ωτ/2)| for a pulse τ long, its phase
    /// set by its start). Planned when the move starts, on the payload's model, against
    /// the counts the move will send; it may start within the move's last ringing period.
    /// The count must be latched every tick (a PWM period of one tick).
    struct CountTrim {
        var axis: Int
        var ticks: Range<Int>
        var counts: Double

        /// `hornAhead`: the horn's angle at each tick from `firstTick` until the move has
        /// arrived (the last). The trim that ends earliest (at the arrival at best) and
        /// leaves the camera ringing below `goal` (°/s of rate amplitude), starting at most
        /// a ringing period before the arrival or after it and lasting at most a period;
        /// failing that the one that leaves least, if it halves what is there; nil when the
        /// counts leave less than the goal anyway.
        static func plan(
            axis: Int, payload: Payload, tickSeconds: Double, angle: Double, rate: Double, hornAhead: [Double], countDegrees: Double,
            goalDegreesPerSecond goal: Double, firstTick: Int
        ) -> CountTrim? {
            guard let final = hornAhead.last else { return nil }
            let w = 2 * Double.pi * payload.frequencyHz
            func amplitude(_ e: Double, _ v: Double) -> Double { (v * v + w * w * e * e).squareRoot() }
            let arrival = hornAhead.count
            let span = Int((1 / (payload.frequencyHz * tickSeconds)).rounded(.up))
            // The camera without a trim, relative to the final horn, k ticks from now.
            var p = PayloadResponse(payload: payload, tickSeconds: tickSeconds, angle: angle)
            p.rate = rate
            var base: [(e: Double, v: Double)] = [(angle - final, rate)]
            for k in 0..<(arrival + 2 * span) {
                p.step(horn: k < arrival ? hornAhead[k] : final)
                base.append((p.angle - final, p.rate))
            }
            let left = amplitude(base[arrival].e, base[arrival].v)
            guard left > goal else { return nil }
            // A one-count pulse of `width` ticks from rest, `lag` ticks after it began (linear:
            // added to the untrimmed camera).
            var pulse: [[(e: Double, v: Double)]] = [[]]
            for width in 1...span {
                var q = PayloadResponse(payload: payload, tickSeconds: tickSeconds, angle: 0)
                var states: [(e: Double, v: Double)] = [(0, 0)]
                for k in 0..<(2 * span) {
                    q.step(horn: k < width ? countDegrees : 0)
                    states.append((q.angle, q.rate))
                }
                pulse.append(states)
            }
            var best: (start: Int, width: Int, sign: Double, end: Int, left: Double)?
            var least: (start: Int, width: Int, sign: Double, end: Int, left: Double)?
            for start in max(0, arrival - span)...(arrival + span) {
                for width in 1...span {
                    let end = max(arrival, start + width)
                    guard end - start < pulse[width].count, end < base.count else { continue }
                    for sign in [1.0, -1.0] {
                        let r = pulse[width][end - start]
                        let a = amplitude(base[end].e + sign * r.e, base[end].v + sign * r.v)
                        if a < least?.left ?? .infinity { least = (start, width, sign, end, a) }
                        if a <= goal, best.map({ end < $0.end || (end == $0.end && a < $0.left) }) ?? true { best = (start, width, sign, end, a) }
                    }
                }
            }
            guard let pick = best ?? least.flatMap({ $0.left < left / 2 ? $0 : nil }) else { return nil }
            return CountTrim(axis: axis, ticks: (firstTick + pick.start)..<(firstTick + pick.start + pick.width), counts: pick.sign)
        }
    }

    /// The largest ringing of the camera about the horn after one pan move of `degrees`
    /// arrives (the shaped output included), over `windowSeconds`, in degrees.
    static func residualWobble(
        payload: Payload, shaper: ShaperConfig?, degrees: Double, deadbandDeg: Double = 0, pwmHz: Double = 50, windowSeconds: Double = 3
    ) throws -> Double {
        let program = try program(
            rig: rig(payload: payload, shaper: shaper, settle: nil, deadbandDeg: deadbandDeg, pwmHz: pwmHz), poses: [(degrees, 0)],
            settleSeconds: windowSeconds)
        let rig = program.rig
        let start = rig.homePose
        let output = SimOutput(config: try simConfig(rig), rig: rig)
        try output.start(channels: rig.axes.map(OutputChannel.init), initial: rig.axes.indices.map { rig.axes[$0].command(forPosition: start[$0]) })
        var player = Player(rig: rig, motion: program.motion, startPose: start)
        var frame = start
        var commands = rig.axes.indices.map { rig.axes[$0].command(forPosition: start[$0]) }
        var sent = [Double](repeating: 0, count: rig.axes.count)
        var worst = 0.0
        var settling = false
        var ticks = 0
        while !player.isFinished, ticks < Bounds.maxTicks {
            ticks += 1
            _ = player.tick(into: &frame)
            for i in rig.axes.indices { commands[i] = rig.axes[i].command(forPosition: frame[i]) }
            try output.write(commands, sent: &sent)
            if case .settling = player.phase {
                settling = true
                worst = max(worst, abs(output.cameraMotion.angles[0] - output.hornPositions[0]))
            } else if settling {
                break
            }
        }
        output.shutdown(safe: rig.axes.map { _ in .off })
        return worst
    }

    /// The rig's simulated output section, as `rig play` reads it.
    static func simConfig(_ rig: Rig) throws -> SimOutputConfig {
        try SimOutputConfig.parse(rig.output, axes: rig.axes)
    }

    /// A ring-down as a gyro on the camera would read it: the payload's rate after a horn
    /// step of `degrees`, sampled every `sampleSeconds` for `seconds`, with Gaussian noise
    /// of `noise` °/s drawn from `seed`.
    static func noisyRingDown(payload: Payload, degrees: Double, sampleSeconds: Double, seconds: Double, noise: Double, seed: UInt64) -> [Double] {
        var camera = PayloadResponse(payload: payload, tickSeconds: sampleSeconds, angle: 0)
        var random = SplitMix64(seed: seed)
        return (0..<Int(seconds / sampleSeconds)).map { _ in
            camera.step(horn: degrees)
            return camera.rate + noise * random.gaussian()
        }
    }
}
