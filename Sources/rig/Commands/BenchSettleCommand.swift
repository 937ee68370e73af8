import ArgumentParser
import FoundationEssentials
import RigCore
import RigFormat

/// `rig bench settle`: shaped moves and a measured settle against an S-curve and a fixed
/// settle, on the simulated head.
struct BenchSettleCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "settle",
        abstract: "Shaped moves and a measured settle against a fixed 0.5 s settle, on the simulated head with a payload.",
        discussion: """
            Plays a 3-row × 8-column panorama (35 mm lens on full frame, portrait) on the \
            simulated output in virtual time, both axes carrying a payload of each --payloads \
            frequency with --damping, for each --pwm-hz (the simulated PCA9685's frequency: its \
            counts and one pulse per period), twice: as the reference (S-curve moves, a fixed \
            0.5 s settle) and shaped (--shaper at the payload's frequency) with the simulated \
            settle sensor (its threshold the rate that would blur an exposure by 0.5 px, held \
            half a ringing period, a timeout sized to the payload: how long one output count's \
            step rings above the threshold), lever by lever: S-curves and the hold (round 5), \
            trapezoids (a shaped axis's default), the settle by the ringing's envelope, and a \
            one-count trim after each move (the product's, as rig play plays it: only where the \
            PWM period is one tick, told each move's coming pulses when it starts; the rows \
            without it set the shaper's "trim": false), the envelope's window starting at the \
            last count sent. Residual wobble is with the trim (the product's default), the \
            camera's largest distance from where it comes to rest. \
            Reports per payload and frequency: the mean time \
            per step from the start of its move to the start of its exposure, shaped ÷ \
            reference; and the frames whose blur (the camera's angular excursion during the \
            exposure × pixels per degree of the lens over --image-width) exceeds 0.5 px. Then, \
            with each shaper on the payload's frequency and 20 % low and high, the residual \
            wobble after a 20° move ÷ the unshaped move's; and the frequency and damping \
            identified (RingDown) from a ring-down with gyro noise. The simulation is \
            deterministic: the figures do not depend on the machine.
            """
    )

    @Option(parsing: .upToNextOption, help: ArgumentHelp("Payload frequencies, Hz.", valueName: "hz"))
    var payloads: [Double] = [3, 5]

    @Option(help: ArgumentHelp("The payloads' damping ratio.", valueName: "ζ"))
    var damping = 0.03

    @Option(help: ArgumentHelp("Each frame's exposure, seconds.", valueName: "s"))
    var exposure = 1.0 / 60

    @Option(help: ArgumentHelp("The image's width (long side), pixels.", valueName: "px"))
    var imageWidth = 6000.0

    @Option(help: ArgumentHelp("The ring-down's gyro noise (σ), degrees per second.", valueName: "deg/s"))
    var noise = 0.5

    @Option(help: ArgumentHelp("The simulated servos' deadband (deadbandDeg), degrees.", valueName: "deg"))
    var deadband = 0.0

    @Option(
        name: .customLong("pwm-hz"), parsing: .upToNextOption,
        help: ArgumentHelp("The simulated PCA9685's PWM frequencies (its counts and pulses per second), Hz.", valueName: "hz"))
    var pwmHz: [Double] = [50, 200]

    @Option(help: ArgumentHelp("The shaper of the shaped run: zv, mzv, ei or zvd.", valueName: "kind"))
    var shaper = "zv"

    @Option(
        help: ArgumentHelp(
            "The measured settle's timeout, seconds (default: sized to the payload: how long one output count's step rings above the threshold).",
            valueName: "s"))
    var timeout: Double?

    @Option(
        help: ArgumentHelp(
            "How long the measured rate must stay below the threshold, seconds (default: half the payload's ringing period, at least 0.05).",
            valueName: "s"))
    var hold: Double?

    @Option(
        name: .customLong("jerk-ramp"),
        help: ArgumentHelp(
            "The shaped axes' jerk ramp, seconds: maxJerk = maxAcceleration / S on the shaped runs' moves and the wobble's shaped moves (default: a shaped axis's trapezoids, 0.001).",
            valueName: "s"))
    var jerkRamp: Double?

    @Flag(help: "Print the figures as JSON.")
    var json = false

    static let blurLimitPixels = 0.5
    static let referenceSettleSeconds = 0.5

    func validate() throws {
        guard !payloads.isEmpty, payloads.allSatisfy({ (0.5...50).contains($0) }) else { throw ValidationError("--payloads: valid: 0.5…50 Hz each") }
        guard (0...0.7).contains(damping) else { throw ValidationError("--damping \(format(damping)): valid: 0…0.7") }
        guard (0.0001...2).contains(exposure) else { throw ValidationError("--exposure \(format(exposure)): valid: 0.0001…2 s") }
        guard (100...100_000).contains(imageWidth) else { throw ValidationError("--image-width \(format(imageWidth)): valid: 100…100000 px") }
        guard (0...5).contains(deadband) else { throw ValidationError("--deadband \(format(deadband)): valid: 0…5°") }
        guard (0...100).contains(noise) else { throw ValidationError("--noise \(format(noise)): valid: 0…100 °/s") }
        // The bench's servos take pulses up to 2500 µs: a period must be longer.
        guard !pwmHz.isEmpty, pwmHz.allSatisfy({ (24...399).contains($0) }) else { throw ValidationError("--pwm-hz: valid: 24…399 Hz each") }
        guard ShaperConfig.Kind(rawValue: shaper) != nil else {
            throw ValidationError("--shaper \(shaper): valid: \(ShaperConfig.Kind.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        if let hold, !MeasuredSettle.holdRangeSeconds.contains(hold) { throw ValidationError("--hold \(format(hold)): valid: 0…5 s") }
        if let timeout, !MeasuredSettle.timeoutRangeSeconds.contains(timeout) { throw ValidationError("--timeout \(format(timeout)): valid: 0.05…600 s") }
        if let jerkRamp, !Axis.jerkRampSecondsRange.contains(jerkRamp) { throw ValidationError("--jerk-ramp \(format(jerkRamp)): valid: 0.001…1 s") }
    }

    struct Row {
        var frequencyHz: Double
        var pwmHz: Double
        var countDegrees: Double
        var timeoutSeconds: Double
        var holdSeconds: Double
        var reference: SettleBench.PanoramaFigures
        /// The shaped run with every lever (the last of `levers`).
        var shaped: SettleBench.PanoramaFigures
        /// The shaped run before and after each lever, in `Lever` order.
        var levers: [SettleBench.PanoramaFigures]
        /// Kind → residual ÷ unshaped, on frequency and 20 % low and high.
        var wobble: [(kind: ShaperConfig.Kind, exact: Double, low: Double, high: Double)]
        var identified: Payload?
    }

    /// The shaped runs, before and after each lever toward the time goal.
    enum Lever: String, CaseIterable {
        /// Round 5: S-curve moves (a 0.1 s jerk ramp) shaped, the settle by the hold.
        case before = "S-curve, hold"
        /// Shaped moves planned as trapezoids (a shaped axis's default).
        case trapezoid = "trapezoid, hold"
        /// … and the settle by the ringing's envelope (the loop's, with shapers).
        case envelope = "trapezoid, envelope"
        /// … and the one-count trim after each move (the product's `CountTrim`, on by
        /// default; the other rows turn it off with the shaper's `"trim": false`).
        case trimHold = "trapezoid, hold, trim"
        case trim = "trapezoid, envelope, trim"

        /// The moves' jerk ramp: `shaped` on every row but the S-curve one (nil: the default).
        func jerkRampSeconds(shaped: Double?) -> Double? { self == .before ? Axis.defaultJerkRampSeconds : shaped }
        var envelope: Bool { self == .envelope || self == .trim }
        var trim: Bool { self == .trimHold || self == .trim }
    }

    func run() throws {
        let pixelsPerDegree = imageWidth / SettleBench.lens.horizontalDegrees
        // Still enough that the exposure cannot move the camera by the blur limit.
        let threshold = Self.blurLimitPixels / (pixelsPerDegree * exposure)
        let kind = ShaperConfig.Kind(rawValue: shaper) ?? .zv
        var rows: [Row] = []
        do {
            for f in payloads {
                let payload = Payload(frequencyHz: f, damping: damping)
                let samples = SettleBench.noisyRingDown(payload: payload, degrees: 5, sampleSeconds: 0.005, seconds: 4, noise: noise, seed: 36)
                let identified = RingDown.identify(samples: samples, sampleSeconds: 0.005)
                for hz in pwmHz {
                    let count = SettleBench.countDegrees(pwmHz: hz)
                    let poses = SettleBench.gridPoses
                    let reference = try SettleBench.panorama(
                        SettleBench.program(
                            rig: SettleBench.rig(payload: payload, shaper: nil, settle: nil, deadbandDeg: deadband, pwmHz: hz), poses: poses,
                            settleSeconds: Self.referenceSettleSeconds),
                        exposureSeconds: exposure, pixelsPerDegree: pixelsPerDegree, blurLimitPixels: Self.blurLimitPixels)
                    var settle = MeasuredSettle.sized(sensor: .sim, payload: payload, countDegrees: count, thresholdDegreesPerSecond: threshold)
                    if let hold { settle.holdSeconds = hold }
                    if let timeout { settle.timeoutSeconds = timeout }
                    let levers = try Lever.allCases.map { lever in
                        try SettleBench.panorama(
                            SettleBench.program(
                                rig: SettleBench.rig(
                                    payload: payload, shaper: ShaperConfig(kind: kind, frequencyHz: f, damping: damping), settle: settle,
                                    deadbandDeg: deadband, pwmHz: hz, jerkRampSeconds: lever.jerkRampSeconds(shaped: jerkRamp), trim: lever.trim),
                                poses: poses, settleSeconds: Self.referenceSettleSeconds),
                            exposureSeconds: exposure, pixelsPerDegree: pixelsPerDegree, blurLimitPixels: Self.blurLimitPixels,
                            envelope: lever.envelope)
                    }
                    let shaped = levers[levers.count - 1]
                    func wobble(_ shaper: ShaperConfig?) throws -> Double {
                        try SettleBench.residualWobble(
                            payload: payload, shaper: shaper, degrees: 20, deadbandDeg: deadband, pwmHz: hz, jerkRampSeconds: shaper == nil ? nil : jerkRamp)
                    }
                    let unshaped = try wobble(nil)
                    let wobbles = try ShaperConfig.Kind.allCases.map { kind in
                        let low = try wobble(ShaperConfig(kind: kind, frequencyHz: f * 0.8, damping: damping))
                        let high = try wobble(ShaperConfig(kind: kind, frequencyHz: f * 1.2, damping: damping))
                        let exact = try wobble(ShaperConfig(kind: kind, frequencyHz: f, damping: damping))
                        return (kind: kind, exact: exact / unshaped, low: low / unshaped, high: high / unshaped)
                    }
                    rows.append(
                        Row(
                            frequencyHz: f, pwmHz: hz, countDegrees: count, timeoutSeconds: settle.timeoutSeconds, holdSeconds: settle.holdSeconds,
                            reference: reference, shaped: shaped, levers: levers,
                            wobble: wobbles, identified: identified))
                }
            }
        } catch {
            printError("error: the simulated panorama failed (a bug in rig bench): \(error)")
            throw ExitCode(1)
        }
        if json {
            print(jsonText(rows, threshold: threshold))
            return
        }
        print(
            "rig bench settle: \(SettleBench.tilts.count) rows × \(SettleBench.pans.count) columns, 35 mm portrait on full frame, "
                + "\(format(imageWidth)) px wide (\(fixed(pixelsPerDegree, 1)) px/°), exposure \(fixed(exposure, 4)) s, damping \(format(damping)), deadband \(format(deadband))°"
        )
        print(
            "reference: S-curve moves + fixed \(format(Self.referenceSettleSeconds)) s settle; shaped (every lever): "
                + (jerkRamp.map { "moves with a \(format($0)) s jerk ramp" } ?? "trapezoids") + " through \(kind.rawValue) at the payload's frequency, "
                + "a one-count trim after each move (PWM period = tick only), the simulated settle sensor below \(fixed(threshold, 3)) °/s by the ringing's envelope "
                + "(without it: held "
                + (hold.map { "\(format($0)) s" } ?? "half a ringing period") + "), timeout "
                + (timeout.map { "\(format($0)) s" } ?? "sized to the payload (one count's ring-down)")
        )
        print("")
        print("payload  PWM     count  ref s/step  shaped s/step  ratio  blurred >0.5 px (ref, shaped)  worst blur px (ref, shaped)  timeouts")
        for row in rows {
            let ratio = row.shaped.secondsPerStep / row.reference.secondsPerStep
            print(
                (format(row.frequencyHz) + " Hz").padded(toLength: 9) + (format(row.pwmHz) + " Hz").padded(toLength: 7)
                    + (fixed(row.countDegrees, 3) + "°").leftPadded(to: 7)
                    + fixed(row.reference.secondsPerStep, 3).leftPadded(to: 12) + fixed(row.shaped.secondsPerStep, 3).leftPadded(to: 15)
                    + fixed(ratio, 2).leftPadded(to: 7)
                    + "\(row.reference.blurredFrames)/\(row.reference.frames), \(row.shaped.blurredFrames)/\(row.shaped.frames)".leftPadded(to: 31)
                    + "\(fixed(row.reference.worstBlurPixels, 2)), \(fixed(row.shaped.worstBlurPixels, 2))".leftPadded(to: 29)
                    + "\(row.shaped.timeouts) (\(format(row.timeoutSeconds)) s)".leftPadded(to: 10))
        }
        print("")
        print("shaped runs, lever by lever (\(kind.rawValue)):")
        print("payload  PWM    moves, settle, trim              s/step  ratio  blurred >0.5 px  worst blur px  timeouts")
        for row in rows {
            for (lever, p) in zip(Lever.allCases, row.levers) {
                print(
                    (format(row.frequencyHz) + " Hz").padded(toLength: 9) + (format(row.pwmHz) + " Hz").padded(toLength: 7)
                        + lever.rawValue.padded(toLength: 30) + fixed(p.secondsPerStep, 3).leftPadded(to: 8)
                        + fixed(p.secondsPerStep / row.reference.secondsPerStep, 2).leftPadded(to: 7)
                        + "\(p.blurredFrames)/\(p.frames)".leftPadded(to: 17) + fixed(p.worstBlurPixels, 2).leftPadded(to: 15)
                        + "\(p.timeouts)".leftPadded(to: 10))
            }
        }
        print("")
        print("payload  PWM    shaper  wobble ÷ unshaped, shaper on frequency  20 % low  20 % high")
        for row in rows {
            for w in row.wobble {
                print(
                    (format(row.frequencyHz) + " Hz").padded(toLength: 9) + (format(row.pwmHz) + " Hz").padded(toLength: 7)
                        + w.kind.rawValue.padded(toLength: 6)
                        + percent(w.exact, digits: 1).leftPadded(to: 39) + percent(w.low, digits: 1).leftPadded(to: 10)
                        + percent(w.high, digits: 1).leftPadded(to: 11))
            }
        }
        print("")
        print("payload  identified from a noisy ring-down (σ \(format(noise)) °/s)  frequency error  damping error")
        for row in rows where row.pwmHz == rows.first?.pwmHz {
            guard let id = row.identified else {
                print((format(row.frequencyHz) + " Hz").padded(toLength: 9) + "not identified")
                continue
            }
            print(
                (format(row.frequencyHz) + " Hz").padded(toLength: 9)
                    + "\(fixed(id.frequencyHz, 3)) Hz, ζ \(fixed(id.damping, 4))".padded(toLength: 49)
                    + percent(id.frequencyHz / row.frequencyHz - 1, digits: 2).leftPadded(to: 15) + fixed(id.damping - damping, 4).leftPadded(to: 15))
        }
    }

    private func jsonText(_ rows: [Row], threshold: Double) -> String {
        let items = rows.map { row in
            let wobble = row.wobble.map {
                "\"\($0.kind.rawValue)\": {\"on_frequency\": \(number($0.exact)), \"low\": \(number($0.low)), \"high\": \(number($0.high))}"
            }.joined(separator: ", ")
            let id = row.identified.map { "{\"frequency_hz\": \(number($0.frequencyHz)), \"damping\": \(number($0.damping))}" } ?? "null"
            func panorama(_ p: SettleBench.PanoramaFigures) -> String {
                "{\"seconds_per_step\": \(number(p.secondsPerStep)), \"frames\": \(p.frames), \"blurred_frames\": \(p.blurredFrames), "
                    + "\"worst_blur_px\": \(number(p.worstBlurPixels)), \"settle_timeouts\": \(p.timeouts)}"
            }
            return "{\"payload_hz\": \(number(row.frequencyHz)), \"pwm_hz\": \(number(row.pwmHz)), \"count_deg\": \(number(row.countDegrees)), "
                + "\"settle_timeout_s\": \(number(row.timeoutSeconds)), \"settle_hold_s\": \(number(row.holdSeconds)), \"reference\": \(panorama(row.reference)), \"shaped\": \(panorama(row.shaped)), "
                + "\"step_time_ratio\": \(number(row.shaped.secondsPerStep / row.reference.secondsPerStep)), "
                + "\"levers\": {\(zip(Lever.allCases, row.levers).map { "\"\($0.0.rawValue)\": \(panorama($0.1))" }.joined(separator: ", "))}, "
                + "\"wobble_ratio_20pct_off\": {\(wobble)}, \"identified\": \(id)}"
        }
        return "{\"damping\": \(number(damping)), \"exposure_s\": \(number(exposure)), \"image_width_px\": \(number(imageWidth)), "
            + "\"blur_limit_px\": \(number(Self.blurLimitPixels)), \"threshold_deg_per_s\": \(number(threshold)), \"shaper\": \"\(shaper)\", \"noise_deg_per_s\": \(number(noise)), \"deadband_deg\": \(number(deadband)), \"jerk_ramp_s\": \(jerkRamp.map(number) ?? "null"), \"rows\": [\(items.joined(separator: ", "))]}"
    }
}
