import Foundation
import Glibc
import Logging
import RigCore
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
}

/// Why a jog session could not start.
public struct JogError: Error, Sendable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// Runs `rig jog`: gamepad (or keyboard) jogging through the same control loop and
/// limiter as `rig play`, on `output`, until Start/q/Back, Ctrl-C, or a fault. Blocks.
///
/// Starts the output, the loop thread, the gamepad thread (which waits for a pad and
/// resumes after an unplug) and, when there is no gamepad and stdin is a terminal, the
/// keyboard. Recorded keys go to `options.recordPath` after every change. Every way out
/// leaves the output in its safe state and the terminal restored.
public func runJogSession(rig: Rig, output: Output, options: JogOptions, logger: Logger) throws -> JogSummary {
    var config = rig.jog ?? JogConfig.standard(for: rig.axes)
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
    if let path = options.recordPath, FileManager.default.fileExists(atPath: path) {
        throw JogError("\(path) exists; choose a new file for --record (a jog session starts a new program)")
    }
    let startPose = options.startPose ?? rig.homePose
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

    let channels = rig.axes.map(OutputChannel.init)
    try output.start(channels: channels, initial: rig.axes.indices.map { rig.axes[$0].command(forPosition: startPose[$0]) })
    let trace = try options.tracePath.map { try TraceWriter(path: $0, axes: rig.axes, pwmPeriodMicroseconds: output.pwmPeriodMicroseconds) }

    let notices = SPSCRing<JogNotice>(capacity: 1024)
    let source = JogSource(rig: rig, config: config, input: input, preview: preview, startPose: startPose, notices: notices)
    let loop = ControlLoop(rig: rig, source: source, output: output, clock: MonotonicClock(),
                           options: LoopOptions(realtime: options.realtime, stopWhenLimited: false), trace: trace, startPose: startPose)
    let trap = InterruptTrap(onStop: { loop.requestStop() }, onAbort: { loop.requestAbort() })
    defer { trap.cancel() }

    loop.start()
    let done = DispatchSemaphore(value: 0)
    let waiter = Thread {
        _ = loop.wait()
        done.signal()
    }
    waiter.name = "rig-jog-wait"
    waiter.start()

    var saveError: String?
    func drain() {
        while let notice = notices.pop() {
            do {
                if let line = try recorder.handle(notice) { logger.notice("\(line)") }
            } catch {
                saveError = error.description
                logger.error("\(error.description)")
            }
            if let line = describe(notice) { logger.notice("\(line)") }
        }
        while let event = loop.events.pop() {
            if case .outputFault(let message, let time) = event { logger.error("output fault at t=\(rounded(time))s: \(message)") }
        }
    }
    while done.wait(timeout: .now() + .milliseconds(50)) == .timedOut { drain() }
    drain()
    try? trace?.close()

    let loopResult = loop.wait()
    let inputName = [gamepadPresent || input.snapshot.generation > 0 ? "gamepad" : nil, keyboard != nil ? "keyboard" : nil]
        .compactMap { $0 }.joined(separator: " + ")
    return JogSummary(keyCount: recorder.recording.count,
                      programPath: recorder.recording.isEmpty ? nil : options.recordPath,
                      input: inputName.isEmpty ? "none" : inputName, loop: loopResult, saveError: saveError)
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
