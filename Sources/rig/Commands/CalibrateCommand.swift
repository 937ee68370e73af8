import ArgumentParser
import Logging
import RigCore
import RigDevices
import RigFormat
import RigGamepad
import RigPCA9685
import RigRuntime

struct CalibrateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "calibrate",
        abstract: "Derive calibration values from measurements.",
        subcommands: [CalibrateServo.self, CalibrateResonance.self, CalibrateOscillator.self]
    )
}

struct CalibrateOscillator: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "oscillator",
        abstract: "Compute a PCA9685's real oscillator frequency from a measured output frequency.",
        discussion: """
            Play anything on the rig, measure the PWM frequency on one channel (frequency counter, \
            scope, logic analyser), then run this with the rig file and the measurement. Write the \
            printed value into the rig file's output.oscillatorHz.
            """
    )

    @Option(help: ArgumentHelp("The output frequency you measured, in Hz.", valueName: "hz"))
    var measuredHz: Double

    @Option(help: ArgumentHelp("The rig file (its pca9685 frequencyHz and oscillatorHz were in use).", valueName: "rig.json"))
    var rig: String?

    @Option(help: "The frequencyHz that was configured (without --rig).")
    var frequencyHz: Double = 50

    @Option(help: "The oscillatorHz that was configured (without --rig).")
    var oscillatorHz: Double = 25_000_000

    func run() throws {
        var frequency = frequencyHz
        var oscillator = oscillatorHz
        if let rig {
            let config = try OutputDrivers.pca9685(FileLoading.loadRig(rig), file: rig)
            frequency = config.frequencyHz
            oscillator = config.oscillatorHz
        }
        do throws(PCA9685CalibrationError) {
            let calibrated = try PCA9685Math.calibratedOscillator(measuredHz: measuredHz, frequencyHz: frequency, oscillatorHz: oscillator)
            print("oscillatorHz: \(fixed(calibrated, 0))")
            let error = (calibrated / oscillator - 1) * 100
            print("(the configured \(fixed(oscillator, 0)) Hz was off by \(error >= 0 ? "+" : "")\(fixed(error, 2)) %: pulse widths were off by as much)")
        } catch {
            printError("error: \(error)")
            throw ExitCode(2)
        }
    }
}

/// `rig calibrate servo`: find a servo's pulse widths by moving it in raw µs and reading
/// its angle off, and write them into the rig file as a multi-point `calibration`.
struct CalibrateServo: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "servo",
        abstract: "Calibrate a servo axis interactively: raw pulse widths in, angles read off, a calibration table into the rig file.",
        discussion: """
            Drives the axis's channel in raw pulse widths, starting where it is (or at the \
            file's pulse for home) within ±300 µs, a range shown on screen that only w widens. \
            ←/→ step 5 µs, ↑/↓ 50 µs, ,/. 1 µs; [ and ] mark the ends of travel; d starts and \
            ends a deadband search; a, then the angle the axis shows (a protractor, a printed \
            dial, or two marks of the scene N° apart) and Enter records a point; x deletes \
            the last; s writes the points into the rig file's axis as "calibration" (the rest \
            of the file unchanged) and prints the resolution per output count; q quits \
            without saving. Ctrl-C leaves the servo in the output's safe state. A gamepad, \
            if one is plugged in, does the same (its keys are shown): with --angles, its A \
            records each listed angle in turn (a printed dial's marks), so the keyboard is \
            only needed to type others. See docs/pca9685.md.
            """)

    @Option(help: "The rig file (its axis's calibration is rewritten on save).")
    var rig: String

    @Option(help: "The servo axis to calibrate.")
    var axis: String

    @Option(
        help: ArgumentHelp(
            "The angles the gamepad's A records in turn, degrees (a printed dial's marks), comma-separated.", valueName: "-60,-30,0,30,60"))
    var angles: String?

    @Option(help: ArgumentHelp("The gamepad's evdev node (default: the first gamepad found).", valueName: "/dev/input/eventN"))
    var device: String?

    @Flag(help: "Keys from the terminal only, even with a gamepad plugged in.")
    var noGamepad = false

    @OptionGroup var session: SessionRunOptions
    @OptionGroup var log: LogOptions

    func validate() throws {
        if let angles, Self.parseAngles(angles) == nil {
            throw ValidationError(
                "--angles \(angles): write angles in degrees separated by commas, each within \(format(Bounds.calibrationAngleDegrees.lowerBound))…\(format(Bounds.calibrationAngleDegrees.upperBound)), such as -60,-30,0,30,60"
            )
        }
        if noGamepad, device != nil || angles != nil { throw ValidationError("--no-gamepad: --device and --angles are the gamepad's") }
    }

    static func parseAngles(_ text: String) -> [Double]? {
        let values = text.split(separator: ",").map { Double(String($0).trimmed()) }
        guard !values.isEmpty, values.allSatisfy({ $0.map(Bounds.calibrationAngleDegrees.contains) ?? false }) else { return nil }
        return values.compactMap { $0 }
    }

    func run() throws {
        let model = try FileLoading.loadRig(rig)
        let logger = log.bootstrap(label: "rig.calibrate")
        let output = try SessionSetup.makeOutput(model, logger: logger)
        var options = ServoCalibrationOptions(rigPath: rig, axisName: axis)
        options.tracePath = session.trace
        options.realtime = !session.noRealtime
        if !noGamepad {
            // A gamepad plugged in now (or the one named) adds its keys; without one, the keyboard alone.
            let finder = GamepadFinder(device: device)
            let found = finder.find()
            if let pad = found.found {
                try? pad.fd.close()
                options.moreKeys = GamepadCalibrationKeys(
                    finder: finder, config: JogConfig.of(model), angles: angles.flatMap(Self.parseAngles) ?? [], logger: logger)
            } else if device != nil || angles != nil {
                printError(
                    "error: no gamepad\(device.map { " at \($0)" } ?? ""): \(found.problems.isEmpty ? "none found" : found.problems.joined(separator: "; ")) (--angles needs one)"
                )
                throw ExitCode(2)
            }
        }
        let summary: ServoCalibrationSummary
        do throws(ServoCalibrationError) {
            summary = try runServoCalibration(rig: model, output: output, options: options, logger: logger)
        } catch {
            printError("error: \(error)")
            throw ExitCode(error.exitCode)
        }
        if let deadband = summary.deadbandMicroseconds { say("deadband: \(format(deadband)) µs") }
        if let table = summary.saved, let saved = summary.savedRig {
            for line in Self.resolution(table, rig: saved, axis: axis) { say(line) }
        }
        try SessionSetup.end(summary.session)
    }

    /// Each segment's degrees per µs of a calibration table (its slope, unsigned).
    static func degreesPerMicrosecond(_ table: Calibration) -> [Double] {
        zip(zip(table.angles, table.angles.dropFirst()), zip(table.pulses, table.pulses.dropFirst())).map { a, p in abs((a.1 - a.0) / (p.1 - p.0)) }
    }

    /// What one output count is worth on the new calibration: on this rig's output, and
    /// on a PCA9685 at 50 Hz when the output is continuous (an axis the simulator does not model).
    static func resolution(_ table: Calibration, rig: Rig, axis: String) -> [String] {
        var lines = ["calibration: " + zip(table.angles, table.pulses).map { "\(format($0))° at \(format($1)) µs" }.joined(separator: ", ")]
        let slopes = Self.degreesPerMicrosecond(table)
        let quantum = rig.axes.first { $0.name == axis }.flatMap { (try? OutputDrivers.config(rig))?.quantum(for: $0) } ?? .continuous
        let count: Double
        var what: String
        if let step = quantum.pulseMicroseconds {
            count = step
            what = "one \(rig.output.type) count (\(fixed(step, 2)) µs)"
        } else {
            count = servoFramePeriodMicroseconds / 4096
            what = "one PCA9685 count at 50 Hz (\(fixed(count, 2)) µs, 12 bits; the \(rig.output.type) output has no steps)"
        }
        if let low = slopes.min(), let high = slopes.max() {
            let range = low == high ? "\(fixed(low * count, 3))°" : "\(fixed(low * count, 3))…\(fixed(high * count, 3))° (by segment)"
            let perMicrosecond = low == high ? "\(fixed(low, 4))°" : "\(fixed(low, 4))…\(fixed(high, 4))°"
            lines.append("resolution of \(axis): \(what) ≈ \(range); 1 µs ≈ \(perMicrosecond)")
        }
        return lines
    }
}

/// `rig calibrate resonance`: step an axis, record the camera's ring-down with the IMU
/// (the rig file's `"imu"`), identify frequency and damping, write a ZV shaper.
struct CalibrateResonance: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "resonance",
        abstract: "Measure an axis's ringing with an IMU on the camera and write a ZV input shaper into the rig file.",
        discussion: """
            Steps the axis by --step degrees and back (within its soft and speed limits, \
            through the same loop and limiter as every run), records the camera's angular rate \
            with the MPU-6050 of the rig file's "imu" section for --seconds after each move, \
            identifies the ringing's frequency and damping (the gyro component that rings \
            most), three times, and writes the medians into the axis as "shaper": {"type": \
            "zv", …} (the rest of the file unchanged). On the simulated rig without an "imu" \
            it measures the simulated payload's own motion (a demonstration). Without an \
            "imu", a camera with a live view measures instead: the motion between its frames \
            (ringing up to about a quarter of its frame rate). Ctrl-C leaves the rig in its \
            safe state. See docs/pca9685.md.
            """)

    @Option(help: "The rig file (its axis's shaper is rewritten).")
    var rig: String

    @Option(help: "The axis to measure.")
    var axis: String

    @Option(help: "The step, degrees.")
    var step: Double = 5

    @Option(help: "How long each ring-down is recorded, seconds.")
    var seconds: Double = 4

    @Flag(help: "Print the result without writing it into the rig file.")
    var dryRun = false

    @OptionGroup var session: SessionRunOptions
    @OptionGroup var log: LogOptions

    func run() throws {
        let model = try FileLoading.loadRig(rig)
        guard (0.5...30).contains(step), (1...30).contains(seconds) else {
            printError("error: --step must be within 0.5…30° and --seconds within 1…30 s")
            throw ExitCode(2)
        }
        guard let index = model.axisIndex(named: axis) else {
            printError("error: \(rig): no axis named \"\(elided(axis))\"; the axes: \(model.axes.map(\.name).joined(separator: ", "))")
            throw ExitCode(2)
        }
        let logger = log.bootstrap(label: "rig.calibrate")
        let output = try SessionSetup.makeOutput(model, logger: logger)
        let sensor: RateSensor
        var camera: Camera?
        if let section = model.imu {
            do throws(FileError) { sensor = MPU6050(config: try MPU6050Config.parse(section)) } catch {
                printError("\(error)")
                throw ExitCode(2)
            }
        } else if model.camera != nil, let motion = try liveViewMotion(model, logger: logger, camera: &camera) {
            sensor = motion
            say("no \"imu\" in \(rig): measuring the motion in \(motion.sensorName); it identifies ringing up to about a quarter of its frame rate")
        } else if let sim = output as? SimOutput {
            guard model.axes[index].payload != nil else {
                printError(
                    "error: \(rig): axis \"\(axis)\" of the simulated rig has no \"payload\": nothing rings to measure (add \"payload\": {\"frequencyHz\": 3, \"damping\": 0.03} to try it)"
                )
                throw ExitCode(2)
            }
            sensor = SimRateSensor(output: sim, axis: index)
            say("no \"imu\" in \(rig): measuring the simulated payload's own motion (a demonstration)")
        } else {
            printError(
                "error: \(rig): rig calibrate resonance needs an MPU-6050-class IMU on the camera, on the I2C bus: add \"imu\": {\"bus\": 1, \"address\": \"0x68\"} (docs/pca9685.md)"
            )
            throw ExitCode(2)
        }
        var options = ResonanceCalibrationOptions(rigPath: rig, axisName: axis)
        options.stepDegrees = step
        options.recordSeconds = seconds
        options.tracePath = session.trace
        options.realtime = !session.noRealtime
        options.save = !dryRun
        let summary: ResonanceCalibrationSummary
        do throws(ServoCalibrationError) {
            summary = try runResonanceCalibration(rig: model, output: output, sensor: sensor, camera: camera, options: options, logger: logger)
        } catch {
            printError("error: \(error)")
            throw ExitCode(error.exitCode)
        }
        if let failure = summary.failure { printError("error: \(failure)") }
        if let payload = summary.result, let index = model.axisIndex(named: axis) {
            let sensor: MeasuredSettle.Sensor = model.imu != nil ? .imu : camera != nil ? .liveView : .sim
            say(Self.settleSuggestion(payload: payload, rig: model, file: rig, axis: index, sensor: sensor))
        }
        try SessionSetup.end(summary.session)
        if summary.failure != nil { throw ExitCode(1) }
    }

    /// A measured settle sized to the ringing found (`MeasuredSettle.sized`), as a line to
    /// paste into the rig file (`file`, as the user named it): the timeout from one output
    /// count's step on this axis.
    static func settleSuggestion(payload: Payload, rig: Rig, file: String, axis index: Int, sensor: MeasuredSettle.Sensor) -> String {
        let axis = rig.axes[index]
        // One output count in µs (a PCA9685 at 50 Hz for a continuous output), in degrees
        // where the axis turns most per µs.
        let countMicroseconds = (try? OutputDrivers.config(rig))?.quantum(for: axis).pulseMicroseconds ?? servoFramePeriodMicroseconds / 4096
        let steepest = axis.calibration.flatMap { CalibrateServo.degreesPerMicrosecond($0).max() } ?? 0.09
        let count = countMicroseconds * steepest
        let settle = MeasuredSettle.sized(sensor: sensor, payload: payload, countDegrees: count)
        return
            "settle: to wait for stillness instead of a guessed settleSeconds, put into \(file): "
            + "\"settle\": {\"sensor\": \"\(sensor.rawValue)\", \"thresholdDegPerS\": \(format(settle.thresholdDegreesPerSecond)), \"holdSeconds\": \(format(settle.holdSeconds)), \"timeoutSeconds\": \(format(settle.timeoutSeconds))}"
            + " (held half a ringing period; the timeout: one output count's step, \(fixed(count, 3))°, rings this long above \(format(settle.thresholdDegreesPerSecond)) °/s)"
    }

    /// The camera's live view as the sensor (the rig has a camera and no IMU): the camera
    /// opened into `camera` (the session starts and closes it); nil, said why, when it has
    /// no live view (the simulator then measures its own payload).
    private func liveViewMotion(_ model: Rig, logger: Logger, camera: inout Camera?) throws -> LiveViewMotion? {
        let opened: Camera?
        do { opened = try CameraBackends.open(model, logger: logger) } catch {
            printError("error: camera: \(error)")
            throw ExitCode(1)
        }
        switch LiveViewMotion.of(camera: opened, fieldOfViewDegrees: model.settle?.fieldOfViewDegrees) {
        case .success(let motion):
            camera = opened
            return motion
        case .failure(let why):
            opened?.close()
            say("no \"imu\" in \(rig), and the camera cannot measure: \(why)")
            return nil
        }
    }
}
