import ArgumentParser
import FoundationEssentials
import Glibc
import Logging
import RigCore
import RigDevices
import RigGamepad

/// `rig jog`: move the rig with a gamepad (or the keyboard) through the same loop and
/// limiter as `rig play`, and record keyframes into a program.
struct JogCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "jog",
        abstract: "Jog the rig with a gamepad (or the keyboard) and record keyframes.",
        discussion: """
            Left stick: pan/tilt; right stick: the next axes; d-pad: one fine step. A records a \
            keyframe, B deletes the last, X goes home, Y previews, Start saves and ends, \
            LB/RB slower/faster, Back quits. Without a gamepad: arrows, +/-, space, q. \
            See docs/jog.md.
            """)

    @Option(help: "The rig file.")
    var rig: String

    @Option(help: "The gamepad's evdev node (default: the first gamepad found, /dev/input/by-id/*-event-joystick first).")
    var device: String?

    @Option(help: "A new program file to record keyframes into; saved after every change.")
    var record: String?

    @Option(help: "Write every tick's pulses to this CSV file.")
    var trace: String?

    @Option(help: "Seconds between recorded keys (default: the rig's jog.spacingSeconds, 2); with --timelapse, frames between keys (default 1).")
    var spacing: Double?

    @Flag(help: "Record a timelapse (keys by frame number) instead of a keyframes program.")
    var timelapse = false

    @Flag(help: "Use the keyboard as well, even when a gamepad is present.")
    var keyboard = false

    @Flag(help: "Never fall back to the keyboard; wait for a gamepad.")
    var noKeyboard = false

    @OptionGroup var log: LogOptions

    func validate() throws {
        if keyboard, noKeyboard { throw ValidationError("--keyboard and --no-keyboard exclude each other") }
        if let spacing {
            guard spacing > 0, spacing.isFinite else { throw ValidationError("--spacing must be greater than 0") }
            if timelapse, spacing.rounded() != spacing {
                throw ValidationError("with --timelapse, --spacing is a whole number of frames, such as 1 or 10")
            }
        }
    }

    func run() throws {
        let model = try FileLoading.loadRig(rig)
        let logger = log.bootstrap(label: "rig.jog")
        let output = try SessionSetup.makeOutput(model, logger: logger)

        var options = JogOptions(
            rigPath: rig, device: device, recordPath: record, tracePath: trace,
            spacing: spacing, timelapse: timelapse)
        options.keyboard = keyboard ? .always : (noKeyboard ? .never : .auto)
        let summary: JogSummary
        do throws(JogError) {
            summary = try runJogSession(rig: model, output: output, options: options, logger: logger)
        } catch {
            printError("error: \(error)")
            throw ExitCode(error.exitCode)
        }

        if let path = summary.programPath {
            say("recorded \(summary.keyCount) key\(summary.keyCount == 1 ? "" : "s") into \(path); play it with: rig play \(path)")
        } else if record != nil {
            say("nothing recorded")
        }
        if let error = summary.saveError { say("warning: the last save failed: \(error)") }
        try SessionSetup.end(summary.session)
    }
}
