import FoundationEssentials
import Glibc
import Logging
import RigCore
import RigFormat
import RigRuntime

/// How a jog session ended.
public struct JogSummary: Sendable {
    /// Keys in the recording when the session ended.
    public var keyCount: Int
    /// The program file, if one was written.
    public var programPath: String?
    /// What drove the rig ("gamepad", "keyboard", "gamepad + keyboard").
    public var input: String
    public var loop: LoopResult
    /// The last save that failed, if any (earlier saves stay on disk).
    public var saveError: String?
    /// How the session ended and its exit code (see `SessionSummary`).
    public var session: SessionSummary
    /// Axes that started from the pose the output remembered (no jump to home).
    public var restoredAxes: [String]
}

/// Why a jog session could not start.
public struct JogError: Error, Sendable, CustomStringConvertible {
    public var message: String
    /// 2: a usage problem (a bad option or path, no way to drive the rig); 1: the rig could not start.
    public var exitCode: Int32
    public init(_ message: String, exitCode: Int32 = 2) {
        self.message = message
        self.exitCode = exitCode
    }
    public var description: String { message }
}

/// Runs `rig jog`: gamepad (or keyboard) jogging through the same session runner, loop
/// and limiter as `rig play`, on `output`, until Start/q/Back, a signal, or a fault. Blocks.
///
/// Starts from the pose the output remembers (no jump to home), else home. Starts the
/// gamepad thread (which waits for a pad and resumes after an unplug) and, when there is
/// no gamepad and stdin is a terminal, the keyboard; with neither it refuses to start.
/// Recorded keys go to `options.recordPath` after every change. Every way out leaves the
/// output in its safe state and the terminal restored.
public func runJogSession(rig: Rig, output: Output, options: JogOptions, logger: Logger) throws(JogError) -> JogSummary {
    var config = JogConfig.of(rig)
    if let spacing = options.spacing, !options.timelapse {
        guard spacing > 0, spacing.isFinite else { throw JogError("--spacing must be a positive number of seconds") }
        config.spacingSeconds = spacing
    }
    let kind: JogRecording.Kind
    if options.timelapse {
        let frames = options.spacing ?? 1
        guard frames >= 1, frames <= Double(Bounds.maxSteps), frames.rounded() == frames else {
            throw JogError("--spacing for a timelapse is a whole number of frames; valid: 1…\(Bounds.maxSteps)")
        }
        kind = .timelapse(spacingFrames: Int(frames))
    } else {
        kind = .keyframes(spacingSeconds: config.spacingSeconds)
    }
    // Output paths are refused before anything starts (exit 2).
    do {
        if let path = options.recordPath {
            try OutputPath.check(path, option: "--record", inputs: [options.rigPath], mustNotExist: true)
        }
        if let path = options.tracePath {
            try OutputPath.check(path, option: "--trace", inputs: [options.rigPath] + (options.recordPath.map { [$0] } ?? []))
        }
    } catch {
        throw JogError(error.description)
    }
    let remembered = StartPose.resolve(rig: rig, output: output)
    let startPose = options.startPose ?? remembered.pose
    guard startPose.count == rig.axes.count else { throw JogError("the start pose has \(startPose.count) values for \(rig.axes.count) axes") }

    let input = GamepadInput()
    let preview = PreviewSlot()
    let recorder = JogRecorder(rig: rig, kind: kind, programPath: options.recordPath, rigPath: options.rigPath, preview: preview)
    let finder = GamepadFinder(directory: options.devicesDirectory, device: options.device)

    // Input: a gamepad if one is there (or one appears), the keyboard as a fallback.
    let initial = finder.find()
    let gamepadPresent = initial.found != nil
    if let found = initial.found { try? found.fd.close() }
    var keyboard: KeyboardService?
    if options.keyboard == .always || (options.keyboard == .auto && !gamepadPresent) {
        keyboard = KeyboardService(input: input)
        if keyboard == nil, !gamepadPresent {
            // Nothing could ever move the rig: say what would, instead of waiting forever.
            let problems = initial.problems.isEmpty ? "" : " (\(initial.problems.joined(separator: "; ")))"
            throw JogError(
                "no gamepad found\(problems) and stdin is not a terminal for the keyboard: plug in a gamepad (or name it with --device /dev/input/eventN), run rig jog in a terminal, or pass --no-keyboard to wait for a gamepad"
            )
        }
    }
    let gamepads = GamepadService(finder: finder, config: config, input: input, logger: logger)
    defer {
        keyboard?.stop()
        gamepads.stop()
    }
    gamepads.start()
    if let keyboard {
        keyboard.start()
        logger.notice("keyboard: arrows move, +/- speed, space records, x deletes, h home, p preview, s save, q quit")
        if !gamepadPresent { logger.notice("no gamepad yet: using the keyboard (a gamepad plugged in later works too)") }
    }
    for problem in initial.problems { logger.warning("gamepad: \(problem)") }

    if options.startPose == nil { remembered.announce(logger) }

    let notices = SPSCRing<JogNotice>(capacity: 1024)
    let source = JogSource(
        rig: rig, config: config, input: input, preview: preview, startPose: startPose, notices: notices)
    var sessionOptions = SessionOptions(loop: LoopOptions(realtime: options.realtime, stopWhenLimited: false), tracePath: options.tracePath)
    sessionOptions.inputPaths = [options.rigPath]
    let pump = JogNoticePump(rig: rig, preview: preview, recorder: recorder, notices: notices, logger: logger)
    let session = RigSession(
        rig: rig, source: source, output: output, startPose: startPose, parts: [pump],
        options: sessionOptions, logger: logger, mailbox: options.mailbox ?? SourceMailbox())
    let summary: SessionSummary
    do throws(SessionError) {
        summary = try session.run()
    } catch {
        throw JogError(error.description, exitCode: error.exitCode)
    }

    let inputName = [gamepadPresent || input.snapshot.generation > 0 ? "gamepad" : nil, keyboard != nil ? "keyboard" : nil]
        .compactMap { $0 }.joined(separator: " + ")
    return JogSummary(
        keyCount: recorder.recording.count,
        programPath: recorder.recording.isEmpty ? nil : options.recordPath,
        input: inputName.isEmpty ? "none" : inputName, loop: summary.loop, saveError: pump.saveError,
        session: summary, restoredAxes: options.startPose == nil ? remembered.restoredAxes : [])
}

/// Jog's part of the session: on the event thread, builds a preview's player when asked
/// and turns the loop's notices into keyframes (recorded and saved) and log lines.
private final class JogNoticePump: SessionPart {
    let rig: Rig
    let preview: PreviewSlot
    let recorder: JogRecorder
    let notices: SPSCRing<JogNotice>
    let logger: Logger
    /// Why saving the recording failed, if it did.
    private(set) var saveError: String?

    init(rig: Rig, preview: PreviewSlot, recorder: JogRecorder, notices: SPSCRing<JogNotice>, logger: Logger) {
        self.rig = rig
        self.preview = preview
        self.recorder = recorder
        self.notices = notices
        self.logger = logger
    }

    var partName: String { "jog" }

    func poll() {
        preview.prepareRequested(rig: rig)
        while let notice = notices.pop() {
            do {
                if let line = try recorder.handle(notice) { logger.notice("\(line)") }
            } catch {
                saveError = "\(error)"
                logger.error("\(error)")
            }
            if let line = describe(notice) { logger.notice("\(line)") }
        }
    }
}

/// A line for the log, for notices the recorder does not report.
private func describe(_ notice: JogNotice) -> String? {
    switch notice {
    case .speed(let level, let fraction): "speed: \(["fine", "normal", "coarse"][min(max(level, 0), 2)]) (\(Int((fraction * 100).rounded()))% of maxVelocity)"
    case .watchdogStopped: "no input for a while: stopped (move a stick to go on)"
    case .inputLost: "input lost: stopping"
    case .inputConnected: "input connected"
    case .homing: "moving home"
    case .previewStarted: "preview: playing the recording (any stick or button interrupts)"
    case .previewEnded: "preview ended"
    case .nothingToPreview: "nothing recorded yet to preview"
    case .quit: "quitting"
    case .record, .deleteLast, .save: nil
    }
}
