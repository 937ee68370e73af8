import Dispatch
import Glibc
import Logging
import RigCore
import RigFormat
import Synchronization

/// How `rig calibrate resonance` runs.
public struct ResonanceCalibrationOptions: Sendable {
    public var rigPath: String
    public var axisName: String
    /// The step, degrees (away from the start and back, within the soft limits).
    public var stepDegrees = 5.0
    /// Steps, each a ring-down identified on its own; the median is written.
    public var trials = 3
    /// How long each ring-down is recorded after its move, seconds.
    public var recordSeconds = 4.0
    public var tracePath: String?
    public var realtime = true
    public var trapSignals = true
    /// Write the shaper into the rig file (false: only print).
    public var save = true
    public var show: @Sendable (String) -> Void = { StandardStreams.out($0) }

    public init(rigPath: String, axisName: String) {
        self.rigPath = rigPath
        self.axisName = axisName
    }
}

/// One ring-down: what it identified, on which gyro component.
public struct RingDownTrial: Sendable, Equatable {
    public var payload: Payload
    /// 0, 1, 2: x, y, z.
    public var component: Int
}

/// How a resonance calibration ended.
public struct ResonanceCalibrationSummary: Sendable {
    public var session: SessionSummary
    /// Every ring-down identified, in order.
    public var trials: [RingDownTrial]
    /// The medians, if every trial identified one.
    public var result: Payload?
    /// The shaper written into the rig file, and the rig it describes.
    public var saved: ShaperConfig?
    public var savedRig: Rig?
    /// Why it found nothing or could not save (the file is unchanged).
    public var failure: String?
}

/// Runs `rig calibrate resonance`: axis `options.axisName` stepped by `stepDegrees` and
/// back, `trials` times, through the one session runner (`RigSession`: its lock, signal
/// trap, loop, limiter and safe state on every way out) on `output`; `sensor` read by the
/// loop every tick after the write; each ring-down after a move identified
/// (`RingDown.identify`) on the gyro component that rings most; the medians written as
/// the axis's `"shaper"` (`RigFileEditor.setShaper`). `camera`, when the sensor is its live
/// view (`LiveViewMotion`): a part of the session, started first and closed last, its
/// live view drawn where the camera points. Blocks.
public func runResonanceCalibration(
    rig: Rig, output: Output, sensor: RateSensor, camera: Camera? = nil, options: ResonanceCalibrationOptions, logger: Logger
) throws(ServoCalibrationError) -> ResonanceCalibrationSummary {
    guard let index = rig.axisIndex(named: options.axisName) else {
        throw ServoCalibrationError(
            "\(options.rigPath): no axis named \"\(elided(options.axisName))\"; the axes: \(rig.axes.map(\.name).joined(separator: ", "))")
    }
    if let path = options.tracePath {
        do { try OutputPath.check(path, option: "--trace", inputs: [options.rigPath]) } catch { throw ServoCalibrationError(error.description) }
    }
    // The measured response is the unshaped one: the axis's shaper (if any) is off for the run.
    var runRig = rig
    runRig.axes[index].shaper = nil
    let axis = runRig.axes[index]
    let start = StartPose.resolve(rig: runRig, output: output)
    start.announce(logger)
    let from = start.pose[index]
    let up = from + options.stepDegrees
    let down = from - options.stepDegrees
    let to: Double
    if up <= axis.softMax {
        to = up
    } else if down >= axis.softMin {
        to = down
    } else {
        throw ServoCalibrationError("axis \"\(axis.name)\" cannot step \(format(options.stepDegrees))° from \(format(from))° within its soft limits")
    }
    // The sensor answers, or nothing starts (the output untouched).
    do throws(PartStartFailure) { try sensor.start() } catch { throw ServoCalibrationError(error.description, exitCode: 1) }
    defer { sensor.close() }
    let recorder = RateRecorder(sensor: sensor, axis: index)
    let part = ResonancePart(
        recorder: recorder, axisIndex: index, axisCount: runRig.axes.count, targets: (0..<options.trials).map { $0 % 2 == 0 ? to : from },
        home: from, recordSeconds: options.recordSeconds, tickSeconds: runRig.tickSeconds, axisName: axis.name, show: options.show)
    var sessionOptions = SessionOptions(loop: LoopOptions(realtime: options.realtime, stopWhenLimited: false), tracePath: options.tracePath)
    sessionOptions.inputPaths = [options.rigPath]
    sessionOptions.trapSignals = options.trapSignals
    sessionOptions.rates = recorder
    let session = RigSession(
        rig: runRig, source: CommandSource(rig: runRig, startPose: start.pose), output: output, startPose: start.pose, camera: camera, parts: [part],
        options: sessionOptions, logger: logger)
    let summary: SessionSummary
    do throws(SessionError) { summary = try session.run() } catch { throw ServoCalibrationError(error.description, exitCode: error.exitCode) }
    var result = ResonanceCalibrationSummary(session: summary, trials: part.trials, failure: part.failure)
    guard result.failure == nil, summary.exitCode == 0, part.trials.count == options.trials else {
        if result.failure == nil, summary.exitCode == 0, !summary.stoppedBySignal {
            result.failure = "stopped before the last ring-down: nothing saved"
        }
        if summary.stoppedBySignal { options.show("stopped: nothing saved\n") }
        return result
    }
    let median = ResonanceMedian(part.trials.map(\.payload))
    result.result = median.payload
    options.show(median.description + "\n")
    let shaper = ShaperConfig(kind: .zv, frequencyHz: median.payload.frequencyHz, damping: median.payload.damping)
    let written = "\"shaper\": {\"type\": \"zv\", \"frequencyHz\": \(format(shaper.frequencyHz)), \"damping\": \(format(shaper.damping))}"
    guard options.save else {
        options.show("dry run: \(options.rigPath) not changed (axis \"\(axis.name)\" would get \(written))\n")
        return result
    }
    do throws(RigFileEditError) {
        result.savedRig = try RigFileEditor.setShaper(shaper, axis: options.axisName, in: options.rigPath)
        result.saved = shaper
        options.show("saved \(written) into axis \"\(axis.name)\" of \(options.rigPath)\n")
    } catch {
        result.failure = "not saved: \(error)"
    }
    return result
}

/// The medians of the trials' frequency and damping, rounded as they are written (3
/// decimals of Hz, 3 of damping), and their spread.
public struct ResonanceMedian: Sendable, CustomStringConvertible {
    public var payload: Payload
    public var frequencySpreadHz: Double
    public var dampingSpread: Double

    public init(_ trials: [Payload]) {
        func median(_ values: [Double]) -> Double {
            let s = values.sorted()
            guard !s.isEmpty else { return .nan }
            return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
        }
        func spread(_ values: [Double]) -> Double { (values.max() ?? 0) - (values.min() ?? 0) }
        let f = trials.map(\.frequencyHz)
        let z = trials.map(\.damping)
        let frequency = min(max((median(f) * 1000).rounded() / 1000, Payload.frequencyRangeHz.lowerBound), Payload.frequencyRangeHz.upperBound)
        let damping = min(max((median(z) * 1000).rounded() / 1000, Payload.dampingRange.lowerBound), Payload.dampingRange.upperBound)
        payload = Payload(frequencyHz: frequency, damping: damping)
        frequencySpreadHz = spread(f)
        dampingSpread = spread(z)
    }

    public var description: String {
        "resonance: \(fixed(payload.frequencyHz, 3)) Hz (spread \(fixed(frequencySpreadHz, 3)) Hz), damping \(fixed(payload.damping, 3)) (spread \(fixed(dampingSpread, 3)))"
    }
}

/// The steps and the recording as a part of the session: on its own thread it sends each
/// move through the loop's mailbox, waits (on the loop's own samples) for the move to
/// end, records the ring-down for `recordSeconds` of loop time, identifies it, and after
/// the last goes back where it started and stops the session.
private final class ResonancePart: SessionPart, @unchecked Sendable {
    private let recorder: RateRecorder
    private let axisIndex: Int
    private let axisCount: Int
    private let targets: [Double]
    private let home: Double
    private let recordSeconds: Double
    private let tickSeconds: Double
    private let axisName: String
    private let show: @Sendable (String) -> Void
    private let stopping = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)
    private let state = Mutex<(trials: [RingDownTrial], failure: String?)>(([], nil))
    private var running = false

    init(
        recorder: RateRecorder, axisIndex: Int, axisCount: Int, targets: [Double], home: Double, recordSeconds: Double, tickSeconds: Double,
        axisName: String, show: @escaping @Sendable (String) -> Void
    ) {
        self.recorder = recorder
        self.axisIndex = axisIndex
        self.axisCount = axisCount
        self.targets = targets
        self.home = home
        self.recordSeconds = recordSeconds
        self.tickSeconds = tickSeconds
        self.axisName = axisName
        self.show = show
    }

    var partName: String { "imu" }
    var trials: [RingDownTrial] { state.withLock { $0.trials } }
    var failure: String? { state.withLock { $0.failure } }

    func start(_ door: SessionDoor) throws(PartStartFailure) {
        show(
            "measuring the resonance of axis \"\(axisName)\" with \(recorder.sensor.sensorName): \(targets.count) steps between \(format(home))° and \(format(targets.first ?? home))°\n"
        )
        running = true
        SystemThread.start(name: "rig-resonance") { [self] in
            run(door)
            finished.signal()
        }
    }

    func finish(_ outcome: SessionOutcome) {
        if running {
            stopping.store(true, ordering: .relaxed)
            finished.wait()
            running = false
        }
    }

    private func fail(_ message: String, _ door: SessionDoor) {
        state.withLock { $0.failure = message }
        door.stop()
    }

    private func run(_ door: SessionDoor) {
        for (n, target) in targets.enumerated() {
            guard let samples = stepAndRecord(to: target, door) else { return }
            // A short gap (a bus read dropped, a live-view frame late on a busy machine) is
            // bridged; readings missing longer than a quarter second, or a tenth of them, fail.
            let maxGap = max(1, Int(0.25 / tickSeconds))
            let uniform = RateSample.onTickGrid(samples, tickSeconds: tickSeconds)
            let filled = (0..<3).map { c in RingDown.bridged(uniform.map { $0[c] }, maxGap: maxGap) }
            guard filled.allSatisfy({ $0 != nil }) else {
                return fail("the sensor's readings failed during ring-down \(n + 1) (missing for more than 0.25 s, or a tenth of them): nothing saved", door)
            }
            let components = filled.map { $0 ?? [] }
            // The component the axis turns about rings most.
            let energy = components.map { values in values.reduce(0) { $0 + $1 * $1 } }
            let component = energy.indices.max { energy[$0] < energy[$1] } ?? 0
            guard let payload = RingDown.identify(samples: components[component], sampleSeconds: tickSeconds) else {
                return fail(
                    "ring-down \(n + 1) did not ring (fewer than three half-cycles above the noise on \(recorder.sensor.componentNames[component])): "
                        + "is the sensor on the camera, and the axis free to swing? Nothing saved", door)
            }
            state.withLock { $0.trials.append(RingDownTrial(payload: payload, component: component)) }
            show(
                "ring-down \(n + 1) of \(targets.count): \(fixed(payload.frequencyHz, 3)) Hz, damping \(fixed(payload.damping, 3)) (\(recorder.sensor.componentNames[component]))\n"
            )
        }
        if targets.last != home { _ = stepAndRecord(to: home, door, recording: false) }
        door.stop()
    }

    /// Sends the axis to `target`, waits for the loop to get there, then returns the
    /// samples of the following `recordSeconds` of loop time, from the sensor's
    /// `lagSeconds` after the arrival (nil: the session is ending).
    private func stepAndRecord(to target: Double, _ door: SessionDoor, recording: Bool = true) -> [RateSample]? {
        var pose = [Double?](repeating: nil, count: axisCount)
        pose[axisIndex] = target
        // Samples from before this move are not part of its ring-down.
        while recorder.samples.pop() != nil {}
        door.mailbox.post(.motion(.goTo(pose: pose)))
        var arrived: Double?
        let lag = recorder.sensor.lagSeconds
        var kept: [RateSample] = []
        kept.reserveCapacity(Int(recordSeconds / tickSeconds) + 1)
        while !stopping.load(ordering: .relaxed) {
            var any = false
            while let sample = recorder.samples.pop() {
                any = true
                if arrived == nil {
                    if abs(sample.position - target) < 1e-6 { arrived = sample.timeSeconds } else { continue }
                }
                guard let t0 = arrived else { continue }
                if !recording { return [] }
                if sample.timeSeconds - t0 < lag { continue }
                if sample.timeSeconds - t0 - lag >= recordSeconds { return kept }
                kept.append(sample)
            }
            if !any { usleep(10_000) }
        }
        return nil
    }
}
