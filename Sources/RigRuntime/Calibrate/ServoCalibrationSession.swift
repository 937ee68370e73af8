import Dispatch
import FoundationEssentials
import Glibc
import Logging
import RigCore
import RigFormat
import Synchronization

/// How `rig calibrate servo` runs.
public struct ServoCalibrationOptions: Sendable {
    public var rigPath: String
    public var axisName: String
    public var tracePath: String?
    public var realtime = true
    /// Where the keys come from: stdin, which must be a terminal (switched to raw mode), or
    /// for tests any descriptor read as it is.
    public var keysDescriptor: Int32 = STDIN_FILENO
    public var requireTerminal = true
    /// Trap SIGINT and the other stop signals (the command line); false when the caller owns them.
    public var trapSignals = true
    /// Where the screen goes: each status line and message, and whether to redraw the
    /// status line in place (a terminal) or print each as a line.
    public var show: @Sendable (String) -> Void = { StandardStreams.out($0) }
    public var redrawInPlace = isatty(STDOUT_FILENO) == 1
    /// Keys from elsewhere beside the terminal's (a gamepad: `GamepadCalibrationKeys`).
    public var moreKeys: (any CalibrationKeySource)?

    public init(rigPath: String, axisName: String) {
        self.rigPath = rigPath
        self.axisName = axisName
    }
}

/// Keys for `rig calibrate servo` from something other than the terminal (a gamepad), on a
/// thread of its own.
public protocol CalibrationKeySource: AnyObject, Sendable {
    /// Its keys, for the screen under the terminal's.
    var help: String { get }
    /// Appended to the status line after every key (what its next press does), if anything.
    var status: String? { get }
    /// Starts delivering keys; `deliver` returns true once the session is ending (deliver
    /// no more).
    func start(_ deliver: @escaping @Sendable (ServoCalibrator.Key) -> Bool)
    /// Stops delivering (returns once its thread has).
    func stop()
}

/// Why `rig calibrate servo` could not start or save.
public struct ServoCalibrationError: Error, Sendable, CustomStringConvertible {
    public var message: String
    /// 2: usage (no such axis, no terminal, a bad path); 1: the rig could not start.
    public var exitCode: Int32
    public init(_ message: String, exitCode: Int32 = 2) {
        self.message = message
        self.exitCode = exitCode
    }
    public var description: String { message }
}

/// How a calibration session ended.
public struct ServoCalibrationSummary: Sendable {
    public var session: SessionSummary
    /// The table written into the rig file, if it was saved.
    public var saved: Calibration?
    /// The rig as the saved file describes it.
    public var savedRig: Rig?
    /// Why saving failed, if it did (the file is unchanged).
    public var saveError: String?
    /// The deadband found, µs, if one was.
    public var deadbandMicroseconds: Double?
    /// Every pulse range the screen showed, in order (the first, then each widening).
    public var shownRanges: [ClosedRange<Double>]
}

/// Runs `rig calibrate servo`: axis `options.axisName`'s channel driven in raw µs through
/// the one session runner (`RigSession`: its lock, signal trap, loop, limiter and safe
/// state on every way out) on `output`, keys from the terminal moving it within the range
/// on screen (`ServoCalibrator`), until `s` saves the table into the rig file
/// (`RigFileEditor`) or `q`, a signal or a fault ends it. Blocks.
public func runServoCalibration(rig: Rig, output: Output, options: ServoCalibrationOptions, logger: Logger) throws(ServoCalibrationError)
    -> ServoCalibrationSummary
{
    guard let index = rig.axisIndex(named: options.axisName) else {
        throw ServoCalibrationError(
            "\(options.rigPath): no axis named \"\(elided(options.axisName))\"; the axes: \(rig.axes.map(\.name).joined(separator: ", "))")
    }
    let axis = rig.axes[index]
    guard axis.kind == .servo else {
        throw ServoCalibrationError("axis \"\(axis.name)\" is a pwm axis: only a servo has a pulse calibration")
    }
    if let path = options.tracePath {
        do { try OutputPath.check(path, option: "--trace", inputs: [options.rigPath]) } catch { throw ServoCalibrationError(error.description) }
    }
    var raw: TerminalRawMode?
    if options.requireTerminal {
        guard let mode = TerminalRawMode(fd: options.keysDescriptor) else {
            throw ServoCalibrationError("rig calibrate servo is interactive: run it in a terminal (stdin is not one)")
        }
        raw = mode
    }
    defer { raw?.restore() }

    // Where the channel is now (the output's remembered pulse), else the file's pulse at home.
    let homePulse = axis.calibration?.pulseMicroseconds(forAngle: axis.home) ?? 1500
    let probe = rig.rawPulse(axis: index, startMicroseconds: homePulse)
    let start = StartPose.resolve(rig: probe, output: output)
    start.announce(logger)
    let calibrator = ServoCalibrator(startMicroseconds: start.pose[index])
    let rawRig = rig.rawPulse(axis: index, startMicroseconds: calibrator.pulseMicroseconds)
    var startPose = start.pose
    startPose[index] = calibrator.pulseMicroseconds

    let keys = CalibrationKeysPart(
        calibrator: calibrator, axisIndex: index, axisCount: rig.axes.count, descriptor: options.keysDescriptor, rigPath: options.rigPath,
        axisName: axis.name, show: options.show, redraw: options.redrawInPlace, moreKeys: options.moreKeys, logger: logger)
    var sessionOptions = SessionOptions(loop: LoopOptions(realtime: options.realtime, stopWhenLimited: false), tracePath: options.tracePath)
    sessionOptions.inputPaths = [options.rigPath]
    sessionOptions.trapSignals = options.trapSignals
    // The trace's position_deg: the angle the file's calibration gives each pulse (the
    // raw axis's own "position" is the pulse).
    sessionOptions.traceAxes = rig.axes
    let session = RigSession(
        rig: rawRig, source: CommandSource(rig: rawRig, startPose: startPose), output: output, startPose: startPose, parts: [keys],
        options: sessionOptions, logger: logger)
    let summary: SessionSummary
    do throws(SessionError) { summary = try session.run() } catch { throw ServoCalibrationError(error.description, exitCode: error.exitCode) }
    let result = keys.result
    return ServoCalibrationSummary(
        session: summary, saved: result.saved, savedRig: result.savedRig, saveError: result.saveError,
        deadbandMicroseconds: result.calibrator.deadbandMicroseconds, shownRanges: result.shownRanges)
}

/// The calibration's keys as a part of the session: reads the terminal on its own thread,
/// moves the channel through the loop's mailbox, shows the state after every key, and
/// saves and stops (or only stops) when asked. Finished with the session, every way out.
private final class CalibrationKeysPart: SessionPart, @unchecked Sendable {
    struct Result {
        var calibrator: ServoCalibrator
        var saved: Calibration?
        var savedRig: Rig?
        var saveError: String?
        var shownRanges: [ClosedRange<Double>] = []
    }

    private let state: Mutex<Result>
    private let axisIndex: Int
    private let axisCount: Int
    private let descriptor: Int32
    private let rigPath: String
    private let axisName: String
    private let show: @Sendable (String) -> Void
    private let redraw: Bool
    private let moreKeys: (any CalibrationKeySource)?
    private let logger: Logger
    private let stopReading = Atomic<Bool>(false)
    /// One key at a time, whoever sent it.
    private let handling = Mutex(())
    /// Saved or quit: no key does anything after.
    private let ended = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)
    private var reading = false

    init(
        calibrator: ServoCalibrator, axisIndex: Int, axisCount: Int, descriptor: Int32, rigPath: String, axisName: String,
        show: @escaping @Sendable (String) -> Void, redraw: Bool, moreKeys: (any CalibrationKeySource)?, logger: Logger
    ) {
        self.moreKeys = moreKeys
        state = Mutex(Result(calibrator: calibrator, shownRanges: [calibrator.window]))
        self.axisIndex = axisIndex
        self.axisCount = axisCount
        self.descriptor = descriptor
        self.rigPath = rigPath
        self.axisName = axisName
        self.show = show
        self.redraw = redraw
        self.logger = logger
    }

    var partName: String { "keys" }
    var result: Result { state.withLock { $0 } }

    func start(_ door: SessionDoor) throws(PartStartFailure) {
        show(
            "calibrating axis \"\(axisName)\" of \(rigPath) in raw pulse widths; nothing is sent outside the range shown\n\(ServoCalibrator.help)\n"
                + (moreKeys.map { $0.help + "\n" } ?? ""))
        render(state.withLock { $0.calibrator })
        reading = true
        SystemThread.start(name: "rig-calibrate") { [self] in
            read(door)
            finished.signal()
        }
        moreKeys?.start { [self] key in handle(key, door) }
    }

    func finish(_ outcome: SessionOutcome) {
        guard reading else { return }
        moreKeys?.stop()
        stopReading.store(true, ordering: .relaxed)
        finished.wait()
        reading = false
        if redraw { show("\n") }
    }

    private func read(_ door: SessionDoor) {
        var decoder = ServoCalibrator.Key.Decoder()
        var buffer = [UInt8](repeating: 0, count: 64)
        while !stopReading.load(ordering: .relaxed) {
            var pfd = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard Glibc.poll(&pfd, 1, 100) > 0 else { continue }
            let count = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count == 0 || (count < 0 && errno != EINTR && errno != EAGAIN) {
                // The terminal closed: end as q would (nothing saved).
                door.stop()
                return
            }
            for i in 0..<max(count, 0) {
                let typing = state.withLock { $0.calibrator.typed != nil }
                guard let key = decoder.feed(buffer[i], typing: typing) else { continue }
                if handle(key, door) { return }
            }
        }
    }

    /// Returns true when the session is ending. The terminal's thread and the other keys'
    /// (a gamepad) both call it; the state is behind its lock, and once one has ended the
    /// session the other's keys do nothing.
    private func handle(_ key: ServoCalibrator.Key, _ door: SessionDoor) -> Bool {
        handling.withLock { _ in handleOne(key, door) }
    }

    private func handleOne(_ key: ServoCalibrator.Key, _ door: SessionDoor) -> Bool {
        if ended.load(ordering: .acquiring) { return true }
        let (action, calibrator) = state.withLock { s in
            let action = s.calibrator.handle(key)
            if s.shownRanges.last != s.calibrator.window { s.shownRanges.append(s.calibrator.window) }
            return (action, s.calibrator)
        }
        switch action {
        case .none:
            render(calibrator)
        case .move(let pulse):
            var pose = [Double?](repeating: nil, count: axisCount)
            pose[axisIndex] = pulse
            door.mailbox.post(.motion(.goTo(pose: pose)))
            render(calibrator)
        case .quit:
            render(calibrator)
            show((redraw ? "\n" : "") + "quit: nothing saved\n")
            ended.store(true, ordering: .releasing)
            door.stop()
            return true
        case .save(let table):
            render(calibrator)
            do throws(RigFileEditError) {
                let rig = try RigFileEditor.setCalibration(table, axis: axisName, in: rigPath)
                state.withLock {
                    $0.saved = table
                    $0.savedRig = rig
                }
                show((redraw ? "\n" : "") + "saved \(table.angles.count) points into \(rigPath)\n")
                ended.store(true, ordering: .releasing)
                door.stop()
                return true
            } catch {
                // The file is as it was; the session goes on so the user can fix and save again.
                state.withLock { $0.saveError = error.description }
                show((redraw ? "\n" : "") + "not saved: \(error)\n")
                render(calibrator)
            }
        }
        return false
    }

    private func render(_ calibrator: ServoCalibrator) {
        var text = calibrator.statusLine
        if let more = moreKeys?.status { text += " · " + more }
        if let message = calibrator.message { text += "  — " + message }
        show(redraw ? "\r\u{1B}[2K" + text : text + "\n")
    }
}
