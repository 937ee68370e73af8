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
            frequency with --damping, twice: as the reference (S-curve moves, a fixed 0.5 s \
            settle) and shaped (a ZV shaper at the payload's frequency) with the simulated \
            settle sensor (its threshold the rate that would blur an exposure by 0.5 px, held 50 ms, \
            a 3 s timeout). Reports per payload: the mean time per step from the start of its \
            move to the start of its exposure, shaped ÷ reference; and the frames whose blur \
            (the camera's angular excursion during the exposure × pixels per degree of the \
            lens over --image-width) exceeds 0.5 px. Then, with each shaper on the payload's frequency and 20 % \
            low and high, the residual wobble after a 20° move ÷ the unshaped move's; and the \
            frequency and damping identified (RingDown) from a ring-down with gyro noise. \
            The simulation is deterministic: the figures do not depend on the machine.
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
    }

    struct Row {
        var frequencyHz: Double
        var reference: SettleBench.PanoramaFigures
        var shaped: SettleBench.PanoramaFigures
        /// Kind → (20 % low, 20 % high) residual ÷ unshaped.
        var wobble: [(kind: ShaperConfig.Kind, exact: Double, low: Double, high: Double)]
        var identified: Payload?
    }

    func run() throws {
        let pixelsPerDegree = imageWidth / SettleBench.lens.horizontalDegrees
        var rows: [Row] = []
        do {
            for f in payloads {
                let payload = Payload(frequencyHz: f, damping: damping)
                let poses = SettleBench.gridPoses
                let reference = try SettleBench.panorama(
                    SettleBench.program(
                        rig: SettleBench.rig(payload: payload, shaper: nil, settle: nil, deadbandDeg: deadband), poses: poses,
                        settleSeconds: Self.referenceSettleSeconds),
                    exposureSeconds: exposure, pixelsPerDegree: pixelsPerDegree, blurLimitPixels: Self.blurLimitPixels)
                var settle = MeasuredSettle(sensor: .sim)
                // Still enough that the exposure cannot move the camera by the blur limit.
                settle.thresholdDegreesPerSecond = Self.blurLimitPixels / (pixelsPerDegree * exposure)
                settle.holdSeconds = 0.05
                settle.timeoutSeconds = 3
                let shaper = ShaperConfig(kind: .zv, frequencyHz: f, damping: damping)
                let shaped = try SettleBench.panorama(
                    SettleBench.program(
                        rig: SettleBench.rig(payload: payload, shaper: shaper, settle: settle, deadbandDeg: deadband), poses: poses,
                        settleSeconds: Self.referenceSettleSeconds),
                    exposureSeconds: exposure, pixelsPerDegree: pixelsPerDegree, blurLimitPixels: Self.blurLimitPixels)
                let unshaped = try SettleBench.residualWobble(payload: payload, shaper: nil, degrees: 20, deadbandDeg: deadband)
                let wobble = try ShaperConfig.Kind.allCases.map { kind in
                    let low = try SettleBench.residualWobble(
                        payload: payload, shaper: ShaperConfig(kind: kind, frequencyHz: f * 0.8, damping: damping), degrees: 20, deadbandDeg: deadband)
                    let high = try SettleBench.residualWobble(
                        payload: payload, shaper: ShaperConfig(kind: kind, frequencyHz: f * 1.2, damping: damping), degrees: 20, deadbandDeg: deadband)
                    let exact = try SettleBench.residualWobble(
                        payload: payload, shaper: ShaperConfig(kind: kind, frequencyHz: f, damping: damping), degrees: 20, deadbandDeg: deadband)
                    return (kind: kind, exact: exact / unshaped, low: low / unshaped, high: high / unshaped)
                }
                let samples = SettleBench.noisyRingDown(payload: payload, degrees: 5, sampleSeconds: 0.005, seconds: 4, noise: noise, seed: 36)
                let identified = RingDown.identify(samples: samples, sampleSeconds: 0.005)
                rows.append(Row(frequencyHz: f, reference: reference, shaped: shaped, wobble: wobble, identified: identified))
            }
        } catch {
            printError("error: the simulated panorama failed (a bug in rig bench): \(error)")
            throw ExitCode(1)
        }
        if json {
            print(jsonText(rows))
            return
        }
        print(
            "rig bench settle: \(SettleBench.tilts.count) rows × \(SettleBench.pans.count) columns, 35 mm portrait on full frame, "
                + "\(format(imageWidth)) px wide (\(fixed(pixelsPerDegree, 1)) px/°), exposure \(fixed(exposure, 4)) s, damping \(format(damping)), deadband \(format(deadband))°"
        )
        print(
            "reference: S-curve moves + fixed \(format(Self.referenceSettleSeconds)) s settle; shaped: ZV at the payload's frequency + simulated settle sensor below \(fixed(0.5 / (pixelsPerDegree * exposure), 3)) °/s"
        )
        print("")
        print("payload  ref s/step  shaped s/step  ratio  blurred >0.5 px (ref, shaped)  worst blur px (ref, shaped)  timeouts")
        for row in rows {
            let ratio = row.shaped.secondsPerStep / row.reference.secondsPerStep
            print(
                (format(row.frequencyHz) + " Hz").padded(toLength: 7)
                    + fixed(row.reference.secondsPerStep, 3).leftPadded(to: 12) + fixed(row.shaped.secondsPerStep, 3).leftPadded(to: 15)
                    + fixed(ratio, 2).leftPadded(to: 7)
                    + "\(row.reference.blurredFrames)/\(row.reference.frames), \(row.shaped.blurredFrames)/\(row.shaped.frames)".leftPadded(to: 31)
                    + "\(fixed(row.reference.worstBlurPixels, 2)), \(fixed(row.shaped.worstBlurPixels, 2))".leftPadded(to: 29)
                    + "\(row.shaped.timeouts)".leftPadded(to: 10))
        }
        print("")
        print("payload  shaper  wobble ÷ unshaped, shaper on frequency  20 % low  20 % high")
        for row in rows {
            for w in row.wobble {
                print(
                    (format(row.frequencyHz) + " Hz").padded(toLength: 9)
                        + w.kind.rawValue.padded(toLength: 6)
                        + percent(w.exact, digits: 1).leftPadded(to: 39) + percent(w.low, digits: 1).leftPadded(to: 10)
                        + percent(w.high, digits: 1).leftPadded(to: 11))
            }
        }
        print("")
        print("payload  identified from a noisy ring-down (σ \(format(noise)) °/s)  frequency error  damping error")
        for row in rows {
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

    private func jsonText(_ rows: [Row]) -> String {
        let items = rows.map { row in
            let wobble = row.wobble.map {
                "\"\($0.kind.rawValue)\": {\"on_frequency\": \(number($0.exact)), \"low\": \(number($0.low)), \"high\": \(number($0.high))}"
            }.joined(separator: ", ")
            let id = row.identified.map { "{\"frequency_hz\": \(number($0.frequencyHz)), \"damping\": \(number($0.damping))}" } ?? "null"
            func panorama(_ p: SettleBench.PanoramaFigures) -> String {
                "{\"seconds_per_step\": \(number(p.secondsPerStep)), \"frames\": \(p.frames), \"blurred_frames\": \(p.blurredFrames), "
                    + "\"worst_blur_px\": \(number(p.worstBlurPixels)), \"settle_timeouts\": \(p.timeouts)}"
            }
            return "{\"payload_hz\": \(number(row.frequencyHz)), \"reference\": \(panorama(row.reference)), \"shaped\": \(panorama(row.shaped)), "
                + "\"step_time_ratio\": \(number(row.shaped.secondsPerStep / row.reference.secondsPerStep)), "
                + "\"wobble_ratio_20pct_off\": {\(wobble)}, \"identified\": \(id)}"
        }
        return "{\"damping\": \(number(damping)), \"exposure_s\": \(number(exposure)), \"image_width_px\": \(number(imageWidth)), "
            + "\"blur_limit_px\": \(number(Self.blurLimitPixels)), \"noise_deg_per_s\": \(number(noise)), \"deadband_deg\": \(number(deadband)), \"rows\": [\(items.joined(separator: ", "))]}"
    }
}
