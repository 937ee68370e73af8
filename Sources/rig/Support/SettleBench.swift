import FoundationEssentials
import RigCore
import RigDevices
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
    /// the default (a shaped axis's trapezoids). `trim`: the shapers' `"trim"` (the
    /// product's one-count trim, `CountTrim`, where the PWM period is one tick).
    static func rig(
        payload: Payload, shaper: ShaperConfig?, settle: MeasuredSettle?, deadbandDeg: Double = 0, pwmHz: Double = 50, jerkRampSeconds: Double? = nil,
        trim: Bool = true
    ) -> String {
        var axisExtra = ", \"payload\": {\"frequencyHz\": \(number(payload.frequencyHz)), \"damping\": \(number(payload.damping))}"
        func jerk(_ acceleration: Double) -> String { jerkRampSeconds.map { ", \"maxJerk\": \(number(acceleration / $0))" } ?? "" }
        if deadbandDeg > 0 { axisExtra += ", \"deadbandDeg\": \(number(deadbandDeg))" }
        if let shaper {
            axisExtra +=
                ", \"shaper\": {\"type\": \"\(shaper.kind.rawValue)\", \"frequencyHz\": \(number(shaper.frequencyHz)), \"damping\": \(number(shaper.damping))\(trim ? "" : ", \"trim\": false")}"
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

    /// Plays `program` from `startPose` tick by tick in virtual time on `output` as the
    /// control loop plays it: a move's coming pulses told to the output when it starts
    /// (the one-count trim's look-ahead), the frame written, the settle sensor's reading
    /// judged by `detector` from what was sent, `player.measured(still:)`, and `.ready`
    /// advanced at once. `each` sees every tick's event, the player's phase after it and
    /// the output after the write (before the detector); it returns false to stop.
    static func simulate(
        _ program: Program, on output: SimOutput, startPose: [Double], plan: ShootingPlan, detector: StillnessDetector,
        each: (_ event: PlayerEvent?, _ ticks: Int, _ phase: Player.Phase) throws -> Bool
    ) throws {
        let rig = program.rig
        var detector = detector
        var player = Player(rig: rig, motion: program.motion, startPose: startPose, shooting: plan)
        var previous = startPose
        var frame = startPose
        var commands = rig.axes.indices.map { rig.axes[$0].command(forPosition: startPose[$0]) }
        var sent = [Double](repeating: 0, count: rig.axes.count)
        // As the control loop does: a move's coming pulses for the trim.
        let window = output.looksAhead ? CountTrim.aheadTicks : 0
        var aheadRows = [Double](repeating: 0, count: window * rig.axes.count)
        var aheadPulses = [Double](repeating: .nan, count: window * rig.axes.count)
        var ticks = 0
        while !player.isFinished, ticks < Bounds.maxTicks {
            ticks += 1
            let event = player.tick(into: &frame)
            for i in rig.axes.indices { commands[i] = rig.axes[i].command(forPosition: frame[i]) }
            var moving = false
            for i in rig.axes.indices where frame[i] != previous[i] { moving = true }
            previous = frame
            var aheadTicks = 0
            switch event {
            case _ where ticks == 1, .moveStarted?, .homeMoveStarted?:
                if window > 0 {
                    aheadTicks = player.framesAhead(into: &aheadRows, window: window)
                    OutputLookAhead.pulses(ofFramesAhead: aheadRows, ticks: aheadTicks, window: window, axes: rig.axes, into: &aheadPulses)
                }
            default: break
            }
            try output.write(commands, sent: &sent)
            if aheadTicks > 0 { output.expect(pulses: aheadPulses, window: window, ticks: aheadTicks) }
            guard try each(event, ticks, player.phase) else { return }
            if case .ready? = event { player.advance() }
            detector.commanded(sent: sent, framesMoving: moving)
            detector.observe(rateDegreesPerSecond: output.rateDegreesPerSecond() ?? .nan, seconds: rig.tickSeconds)
            player.measured(still: detector.isStill)
        }
    }

    /// Plays `program` on the simulated output, each step shot with an exposure of
    /// `exposureSeconds`; blur is the camera's angular excursion during the exposure (all
    /// axes, √Σ) × `pixelsPerDegree`. The lead-in (step 1's move from home) is left out
    /// of the time per step. `envelope`: the settle sensor's verdict by the ringing's
    /// envelope (as the loop runs it for a rig with shapers: its window from the last count
    /// sent), else by the hold alone. The one-count trim is the rig file's (its shapers'
    /// `"trim"`), played by the simulated output as `rig play` plays it.
    static func panorama(
        _ program: Program, exposureSeconds: Double, pixelsPerDegree: Double, blurLimitPixels: Double, envelope: Bool = false
    ) throws -> PanoramaFigures {
        let rig = program.rig
        let start = rig.homePose
        let config = try simConfig(rig)
        let output = SimOutput(config: config, rig: rig)
        try output.start(channels: rig.axes.map(OutputChannel.init), initial: rig.axes.indices.map { rig.axes[$0].command(forPosition: start[$0]) })
        defer { output.shutdown(safe: rig.axes.map { _ in .off }) }
        var plan = ShootingPlan(
            timing: ShotTiming(
                focusSeconds: 0, shutterHoldSeconds: exposureSeconds, exposureWindowSeconds: exposureSeconds, afterShotSeconds: 0, shotsPerStep: 1))
        plan.measuredSettle = rig.settle
        let settle = rig.settle ?? MeasuredSettle(sensor: .sim)
        let detector =
            envelope ? StillnessDetector(settle, rig: rig, pwmPeriodSeconds: config.periodMicroseconds / 1_000_000) : StillnessDetector(settle)
        var moveStart: [Int: Int] = [:]
        var stepTicks: [Int] = []
        var exposing = false
        var low = start
        var high = start
        var blurs: [Double] = []
        var timeouts = 0
        let stepCount = program.steps.count
        try simulate(program, on: output, startPose: start, plan: plan, detector: detector) { event, ticks, _ in
            let angles = output.cameraMotion.angles
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
            default: break
            }
            if blurs.count == stepCount { return false }
            if exposing {
                for i in angles.indices {
                    low[i] = min(low[i], angles[i])
                    high[i] = max(high[i], angles[i])
                }
            }
            return true
        }
        let mean = stepTicks.isEmpty ? 0 : Double(stepTicks.reduce(0, +)) / Double(stepTicks.count) * rig.tickSeconds
        return PanoramaFigures(
            secondsPerStep: mean, blurredFrames: blurs.filter { $0 > blurLimitPixels }.count, frames: blurs.count,
            worstBlurPixels: blurs.max() ?? 0, timeouts: timeouts)
    }

    /// With a measured settle (`"settle"` in the rig), the settle each step of a stepped
    /// program is expected to take, for `rig check` and `rig plan` (`play` logs the measured
    /// one beside it): on the rig's own output as the simulator models it (its counts at its
    /// PWM frequency, the one-count trim where it plays: `expectedSettles`), else (a
    /// BLEControl board) on the frames (`SettleForecast`); `countsHz`: the PWM frequency
    /// the payloads ring on, when the simulator models an axis.
    static func forecast(_ program: Program, startPose: [Double]) -> (steps: [SettleForecast.StepSettle], countsHz: Double?)? {
        guard let settle = program.rig.settle, program.isStepped else { return nil }
        let plan = ShootSetup.checkPlan(program)
        if let model = (try? OutputDrivers.config(program.rig))?.simulatedModel,
            let steps = try? expectedSettles(program, startPose: startPose, plan: plan, settle: settle, output: model)
        {
            return (steps, program.rig.axes.contains { SimOutput.models($0) } ? model.frequencyHz : nil)
        }
        return (SettleForecast.expected(rig: program.rig, motion: program.motion, startPose: startPose, settle: settle, shooting: plan), nil)
    }

    /// What a measured settle is expected to find at each step of `program` (the last time
    /// each was reached), for `rig check`: the program played on the simulated output
    /// `config` models (the rig's own output: its PCA9685 counts at its PWM frequency, one
    /// pulse latched per period, the one-count trim where it plays, the axes' payloads
    /// ringing on the horn), the settle judged as the loop judges it, noise-free.
    static func expectedSettles(
        _ program: Program, startPose: [Double], plan: ShootingPlan, settle: MeasuredSettle, output config: SimOutputConfig
    ) throws -> [SettleForecast.StepSettle] {
        let rig = program.rig
        let output = SimOutput(config: config, rig: rig)
        try output.start(channels: rig.axes.map(OutputChannel.init), initial: rig.axes.indices.map { rig.axes[$0].command(forPosition: startPose[$0]) })
        defer { output.shutdown(safe: rig.axes.map { _ in .off }) }
        var plan = plan
        plan.selfTimed = true
        plan.measuredSettle = settle
        let detector = StillnessDetector(settle, rig: rig, pwmPeriodSeconds: config.periodMicroseconds / 1_000_000)
        var found: [Int: SettleForecast.StepSettle] = [:]
        try simulate(program, on: output, startPose: startPose, plan: plan, detector: detector) { event, _, _ in
            if case .settled(let step, let seconds, let measured)? = event {
                found[step] = SettleForecast.StepSettle(step: step, seconds: seconds, measured: measured)
            }
            return true
        }
        return found.keys.sorted().compactMap { found[$0] }
    }

    /// The largest ringing of the camera after one pan move of `degrees` arrives (the
    /// shaped output included, and the one-count trim where the rig plays it), over
    /// `windowSeconds`, in degrees (`jerkRampSeconds`: as for `rig`): the camera's largest distance from where it comes to
    /// rest (the horn at the window's end), not from the horn as it goes: the trim's pulse
    /// moves the horn by a count for a few ticks to still the camera, and the camera's
    /// motion is what blurs.
    static func residualWobble(
        payload: Payload, shaper: ShaperConfig?, degrees: Double, deadbandDeg: Double = 0, pwmHz: Double = 50, jerkRampSeconds: Double? = nil,
        windowSeconds: Double = 3
    ) throws -> Double {
        let program = try program(
            rig: rig(payload: payload, shaper: shaper, settle: nil, deadbandDeg: deadbandDeg, pwmHz: pwmHz, jerkRampSeconds: jerkRampSeconds),
            poses: [(degrees, 0)],
            settleSeconds: windowSeconds)
        let rig = program.rig
        let start = rig.homePose
        let output = SimOutput(config: try simConfig(rig), rig: rig)
        try output.start(channels: rig.axes.map(OutputChannel.init), initial: rig.axes.indices.map { rig.axes[$0].command(forPosition: start[$0]) })
        var camera: [Double] = []
        try simulate(program, on: output, startPose: start, plan: .none, detector: StillnessDetector(MeasuredSettle(sensor: .sim))) { _, _, phase in
            if case .settling = phase {
                camera.append(output.cameraMotion.angles[0])
                return true
            }
            return camera.isEmpty
        }
        let rest = output.hornPositions[0]
        output.shutdown(safe: rig.axes.map { _ in .off })
        return camera.map { abs($0 - rest) }.max() ?? 0
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
