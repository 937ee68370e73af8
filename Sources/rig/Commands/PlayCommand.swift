import ArgumentParser
import FoundationEssentials
import Glibc
import Logging
import RigCore
import RigDBus
import RigDevices
import RigFormat
import RigGroup
import RigRuntime
import RigSky
import RigStepSync
import SystemPackage

struct PlayCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "play",
        abstract: "Play a program on the rig (the simulated rig unless the rig file names hardware).",
        discussion: """
            The program is checked first; one that breaks a limit anywhere is refused (exit 1). \
            Ctrl-C, SIGTERM, SIGHUP, SIGQUIT or a closed pipe on stdout brakes within the limits, \
            parks and leaves every output in its safe state (exit 0); a second one goes to the \
            safe state at once. A failed write to stdout or stderr (a full disk) does the same \
            with exit 1.
            """
    )

    @Argument(help: "A program file (.json).")
    var file: String

    @Option(help: ArgumentHelp("Output to use instead of the rig file's: sim.", valueName: "output"))
    var output: String?

    @OptionGroup var runOptions: SessionRunOptions

    // Unconditional: `--speed -1` must reach validate() and get its range, not "Missing value".
    @Option(parsing: .unconditional, help: "Run the timeline this many times faster (simulated output only; 0.01…1000).")
    var speed: Double = 1

    @Option(
        help: ArgumentHelp(
            "How stepped programs advance: auto, keyboard, interval:SECONDS, bui (Cascable), gpio (buttons) (default: the program's).", valueName: "trigger"))
    var trigger: String?

    @Option(help: ArgumentHelp("Bluetooth adapter for --trigger bui (default: the rig's stepSync.adapter, else hci0).", valueName: "hciN"))
    var adapter: String?

    @Flag(help: "Stepped programs: wait where the rig stands instead of moving to step 1 at start (the first trigger moves there).")
    var startHere = false

    @Flag(
        help:
            "A program with a \"start\": start at once instead of waiting for it (and play one whose start is past, which is refused otherwise).")
    var startNow = false

    @Flag(help: "Plan, check and report; move nothing.")
    var dryRun = false

    @OptionGroup var log: LogOptions

    @OptionGroup(title: "Shooting") var shootOptions: ShootOptions

    @OptionGroup(title: "Several rigs (docs/multi-rig.md)") var groupOptions: GroupOptions

    func validate() throws {
        if let output, output != "sim" {
            throw ValidationError("--output \(output): only \"sim\" can replace the rig file's output; name hardware in the rig file")
        }
        guard (0.01...1000).contains(speed) else { throw ValidationError("--speed \(format(speed)) is out of range; valid: 0.01…1000") }
        if let trigger, case .failure(let problem) = Trigger.parse(trigger) {
            throw ValidationError("--trigger: \(problem.message)")
        }
    }

    func run() throws {
        try play(group: GroupRequest(groupOptions))
    }

    /// Plays the program, alone or in a group (`--lead`, `rig follow`): in a group the
    /// group link moves the rig from step to step and fires each step on the group's timer.
    func play(group: GroupRequest?) throws {
        let logger = log.bootstrap()
        let prepared = try PreparedProgram.load(file, outputOverride: output == "sim" ? .sim : nil, logger: logger)
        let rig = prepared.program.rig
        if speed != 1, rig.output.type != SimOutputConfig.type {
            printError("--speed only works with the simulated output (this rig uses \(rig.output.type))")
            throw ExitCode(2)
        }
        if group != nil {
            if trigger != nil || startHere || shootOptions.resume {
                printError("error: in a group the leader moves the steps: --trigger, --start-here and --resume do not apply")
                throw ExitCode(2)
            }
            if prepared.program.rig.camera != nil, !shootOptions.noShoot, let timing = prepared.program.shotTiming, timing.shotsPerStep > 1 {
                printError(
                    "\(file): error: in a group each rig takes one frame per step at the group's time; this program takes \(timing.shotsPerStep) (a bracket or shotsPerStep)"
                )
                throw ExitCode(2)
            }
        }
        // In a group the group link advances the steps (a trigger that waits for it).
        let chosenTrigger = group != nil ? .auto : trigger.flatMap(Trigger.init) ?? prepared.program.trigger
        if let start = prepared.program.start { try StartWait.refuseIfPast(start, file: file, startNow: startNow) }
        // Everything that can be refused is refused before the header, and before anything moves.
        let inputs = Self.inputFiles(program: file)
        var options = try SessionSetup.options(runOptions, loop: LoopOptions(speed: speed), inputs: inputs, rig: rig)
        try checkOutputs(rig: rig, program: prepared.program, trigger: chosenTrigger, inputs: inputs)
        let device = try prepared.output ?? SessionSetup.makeOutput(rig, logger: logger)
        prepared.start.announce(logger)
        let startPose = prepared.start.pose
        var shoot = try ShootSetup.plan(shootOptions, programPath: file, program: prepared.program, startPose: startPose, trigger: chosenTrigger)
        let program = shoot.program
        guard try checkPlan(shoot, rig: rig, startPose: startPose, trigger: chosenTrigger) else { return }
        let isTTY = LiveView.stdoutIsTTY
        // A program with a start waits for it here: every check is done, nothing has
        // started or moved; a signal now ends the run with nothing moved.
        if let start = program.start, !startNow { StartWait.wait(until: start, isTTY: isTTY) }
        if let track = program.track, program.start == nil || startNow { Self.warnIfTrackIsNotNow(track) }
        // The group: the leader waits for its followers (and refuses a clock above the bound) before anything moves.
        let link = try group.map { try Self.groupLink($0, program: program, shoot: shoot, logger: logger) }
        let header =
            "▶ \(file) · rig \"\(rig.name)\" · \(device.label)"
            + (link.map { " · group \($0.settings.group) as \($0.settings.name)" } ?? (program.isStepped ? " · trigger \(chosenTrigger)" : ""))
        let view = LiveView(isTTY: isTTY, axes: rig.axes, header: header)
        if !isTTY { say(header) }
        // `+` and `-` nudge a ramp: the keyboard trigger's keys, else a terminal's own.
        let nudge = RampNudge()
        let stepTrigger =
            program.isStepped ? try makeTrigger(chosenTrigger, program: program, output: device, view: view, nudge: nudge, logger: logger) : nil
        // A follower restarted during a group's path rejoins it from its last frame on the
        // move, read from its shot log before this run appends to it.
        if let link, case .follower = link.settings.role { link.attachEarlierFrames(shoot.earlierPathFrames()) }
        try shoot.open(logger: logger, rampNudge: nudge, speed: speed, display: { line in view.log(line) })
        var parts: [any SessionPart] = shoot.runner.map { [$0] } ?? []
        if let motion = shoot.liveViewMotion {
            // After the camera (the session starts it first), before the shots.
            options.stillness = motion
            parts.insert(motion, at: 0)
        }
        if shoot.runner?.rampNudge != nil, chosenTrigger != .keyboard, let keys = RampKeys(nudge: nudge, say: { line in view.log(line) }) {
            parts.append(keys)
        }
        if let path = shoot.logPath { view.log("shot log: \(path)") }
        // The one program host, as `rig serve` plays programs; here it ends with the program.
        // In a group the steps wait for the group link's advance (a trigger the player does not pace).
        // In a group the player only moves and settles: the group link fires each step's frame at the group's time.
        var playerShots = shoot.plan
        if link != nil, program.isStepped {
            playerShots.timing = nil
            playerShots.intervalSeconds = nil
        }
        var hosted = HostedProgram(
            name: file, motion: program.motion, trigger: link != nil ? .keyboard : program.isStepped ? chosenTrigger : .auto, firstStep: shoot.firstStep,
            shots: playerShots, ramp: program.shoot.ramp, stepIntervals: shoot.plan.stepIntervals)
        hosted.moveToFirstStep = !startHere && link == nil
        // A keyframes path in a group starts at the group's time, after every rig's lead-in.
        hosted.holdsBeforePath = link != nil && !program.isStepped
        // A stepped track points where the sky is when each frame is shot, whenever that is.
        hosted.startTrackClock(nowUnix: Date().timeIntervalSince1970)
        if let link {
            shoot.runner?.logsHolds = false
            link.attachRunner(shoot.runner)
            parts.append(link)
            // A keyframes path in a group runs on the group's clock: caught up after a
            // stall, held with the group when a rig is lost, and resumed together.
            if let peaks = PathPeaks(motion: program.motion, axisCount: rig.axes.count, tickSeconds: rig.tickSeconds) {
                let timeline = SharedTimeline(peaks: peaks)
                options.loop.sharedTimeline = timeline
                link.attachTimeline(timeline, axes: rig.axes, tickSeconds: rig.tickSeconds)
            }
        }
        options.liveView = view
        options.viewIntervalSeconds = 0.1
        let session = RigSession(
            rig: rig, source: ProgramHost(rig: rig, startPose: startPose, program: hosted, endsWithProgram: true), output: device,
            startPose: startPose, trigger: stepTrigger, camera: shoot.camera, parts: parts,
            options: options, logger: logger)
        let summary: SessionSummary
        do throws(SessionError) { summary = try session.run() } catch { throw SessionSetup.refused(error) }
        if let shots = shoot.runner, let path = shoot.logPath { say(Self.describe(shots, log: path)) }
        SessionSetup.report(summary, logger: logger)
        try SessionSetup.end(summary)
        // A rig lost during a group's keyframes path stopped every rig: the shoot did not finish.
        for problem in [shoot.runner?.faultMessage, shoot.runner?.logIncomplete, link?.stoppedBecause].compactMap({ $0 }) {
            printError("error: \(problem)")
            throw ExitCode(1)
        }
    }

    /// The group link, connected; a leader has waited for its followers and their clocks
    /// (exit 1 when they do not come or a clock is off by more than the bound).
    private static func groupLink(_ request: GroupRequest, program: Program, shoot: ShootSetup, logger: Logger) throws -> GroupLink {
        var settings = try request.settings(rig: program.rig, sha: ShootSetup.sha256(of: program.file), firstStep: shoot.firstStep)
        // The leader paces the group by its program's interval (a timelapse's, or --trigger interval:S).
        if case .interval(let seconds) = program.trigger {
            settings.intervalSeconds = seconds
            settings.stepIntervals = program.stepIntervals
        }
        let link = GroupLink(
            settings: settings, steps: program.steps, axisNames: program.rig.axes.map(\.name), runner: nil, logger: logger, clock: .measured(),
            keyframes: !program.isStepped)
        do {
            if case .leader = settings.role {
                for note in try link.prepare(within: request.waitSeconds, say: { printError($0) }) { printError("warning: \(note)") }
            } else {
                try link.connect()
            }
        } catch {
            link.close()
            printError("error: \(error); nothing moved")
            throw ExitCode(1)
        }
        return link
    }

    /// Refuses (exit 2) an output this run would write that cannot be written, before
    /// anything moves: the shot log (never an input or the trace), the camera's folders, a
    /// keyboard trigger without a terminal.
    private func checkOutputs(rig: Rig, program: Program, trigger: Trigger, inputs: [String]) throws {
        // The shot log is an output like the trace (appended to, so it may exist): never an
        // input, the trace, a FIFO or a directory.
        if let log = shootOptions.log {
            do { try OutputPath.check(log, option: "--log", inputs: inputs) } catch {
                printError("error: \(error)")
                throw ExitCode(2)
            }
            if let trace = runOptions.trace, (try? OutputPath.check(log, option: "--log", inputs: [trace])) == nil {
                printError("error: --log \(log): is also the --trace file; the trace would overwrite the shot log; give each its own file")
                throw ExitCode(2)
            }
        }
        // Where the camera copies its frames: a frame must never be reported copied to a
        // folder that cannot keep it.
        if !shootOptions.noShoot, trigger != .bui {
            try Self.checkFolders(rig)
        }
        if program.isStepped, trigger == .keyboard, isatty(STDIN_FILENO) != 1 {
            printError(
                "error: --trigger keyboard needs a terminal on stdin (it reads Enter); stdin is not one. Use --trigger interval:SECONDS or auto, or run in a terminal"
            )
            throw ExitCode(2)
        }
    }

    /// The feasibility check on the shoot's plan: refuses (exit 1) a program that breaks a
    /// limit or an interval it cannot keep; false for a dry run (reported, nothing moves).
    private func checkPlan(_ shoot: ShootSetup, rig: Rig, startPose: [Double], trigger: Trigger) throws -> Bool {
        let program = shoot.program
        let report = FeasibilityChecker.check(
            rig: rig, motion: program.motion, startPose: startPose, shooting: shoot.plan, firstStep: shoot.firstStep)
        if !report.feasible || dryRun || log.verbose {
            for line in CheckReport.describe(report, program: program) { say(line) }
        }
        guard report.feasible else {
            printError("\(file): error: refusing to play: the program breaks the limits above (nothing moved)")
            throw ExitCode(1)
        }
        guard report.intervalMisses.isEmpty else {
            if let misses = IntervalMiss.summary(report.intervalMisses) { printError("\(file): error: \(misses)") }
            printError("\(file): error: refusing to play: --trigger \(trigger) cannot be kept (nothing moved); use a longer interval")
            throw ExitCode(1)
        }
        if dryRun {
            if let start = program.start, !startNow { say("dry run: would wait until \(StartWait.describe(start)) to start") }
            say("dry run: \(report.ticks) frames would be sent to the \(rig.output.type) output; nothing moved")
            return false
        }
        return true
    }

    /// A continuous track points where the target is at the track's own times, not now: said
    /// when they are far apart. A stepped one follows the clock: said too, since its path
    /// is then the sky's from now, not the one `check` planned.
    private static func warnIfTrackIsNotNow(_ track: SkyTrack) {
        let off = Date().timeIntervalSince1970 - track.startUnix
        guard abs(off) > 120 else { return }
        let when = "\(UTCTime.text(track.startUnix, dateToo: true)), \(rounded(abs(off) / 60)) min \(off > 0 ? "ago" : "from now")"
        if track.frames != nil {
            printError(
                "warning: the track was planned from \(when): each frame points where \(track.target.name) is when it is shot, from now on (within the soft limits), not at the planned times"
            )
        } else {
            printError("warning: the track starts at \(when): the rig points where \(track.target.name) is at the track's times, not where it is now")
        }
    }

    /// "shot log: PATH (N shots, …)".
    private static func describe(_ shots: ShotRunner, log path: String) -> String {
        var counts = ["\(shots.shotsTaken) shots"]
        if shots.shotsInterrupted > 0 { counts.append("\(shots.shotsInterrupted) interrupted") }
        if shots.downloadsFailed > 0 { counts.append("\(shots.downloadsFailed) NOT downloaded (on the camera's card)") }
        if shots.slotsMissed > 0 { counts.append("\(shots.slotsMissed) MISSED interval slots") }
        return "shot log: \(path) (\(counts.joined(separator: ", ")))"
    }

    /// Refuses (exit 2) a folder the rig's camera would write into that cannot keep files;
    /// warns when little space is left there.
    static func checkFolders(_ rig: Rig) throws {
        for folder in CameraBackends.outputFolders(rig) {
            let free: UInt64
            do { free = try OutputPath.checkFolder(folder.path, option: folder.what) } catch {
                printError("error: \(error); nothing moved")
                throw ExitCode(2)
            }
            if free < lowSpaceBytes {
                printError(
                    "warning: \(folder.what) \(folder.path) has \(megabytes(free)) free: a frame that cannot be copied stays on the camera's card, or stops the run"
                )
            }
        }
    }

    /// Under this, a folder the camera copies into is warned about (a few dozen raw files).
    static let lowSpaceBytes: UInt64 = 1 << 30

    static func megabytes(_ bytes: UInt64) -> String {
        bytes >= 10 << 30 ? "\(bytes >> 30) GB" : "\(bytes >> 20) MB"
    }

    /// The files this run reads (the program and the rig file it names), which no output
    /// path may overwrite.
    static func inputFiles(program path: String) -> [String] {
        var files = [path]
        guard let text = try? FileLoading.readText(path), let root = try? JSONParser.parse(text),
            case .object(let members) = root.value,
            let rig = members.first(where: { $0.key == "rig" }), case .string(let rigString) = rig.value.value
        else { return files }
        let rigPath = rigString.text
        let base = FilePath(path).removingLastComponent().string
        files.append(rigPath.hasPrefix("/") || base.isEmpty ? rigPath : FilePath(base).appending(rigPath).string)
        return files
    }

    private func makeTrigger(
        _ trigger: Trigger, program: Program, output: Output, view: LiveView, nudge: RampNudge, logger: Logger
    ) throws -> StepTrigger? {
        switch trigger {
        case .auto: return nil
        case .interval: return nil  // the player paces it (ShootingPlan.intervalSeconds)
        case .keyboard:
            return KeyboardTrigger(prompt: { line in view.log(line) }, nudge: program.shoot.ramp == nil ? nil : nudge)
        case .bui:
            // Read on load already (`Devices.check`): this cannot fail now.
            var config = try StepSyncConfig.parse(program.rig.stepSync)
            if let adapter { config.adapter = adapter }
            let connection: DBusConnection
            do {
                connection = try DBusConnection(bus: .system, logger: logger)
            } catch {
                printError("error: cannot reach the system D-Bus for Bluetooth: \(error) (is dbus running? see docs/cascable.md)")
                throw ExitCode(1)
            }
            return try BUITrigger(
                connection: connection, config: config, stepCount: program.steps.count,
                stopRecipeAtEnd: program.stopRecipeAtEnd, startsBeforeFirstStep: startHere, logger: logger,
                display: { line in view.log(line) }, textDisplay: output as? TextDisplay,
                buttons: ButtonsConfig.parse(program.rig.buttons), stepLabels: program.steps.map(\.label))
        case .gpio:
            return GPIOTrigger(config: try ButtonsConfig.parse(program.rig.buttons) ?? ButtonsConfig(), logger: logger, display: { line in view.log(line) })
        }
    }
}
