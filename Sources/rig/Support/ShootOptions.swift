import ArgumentParser
import FoundationEssentials
import Glibc
import Logging
import RigCore
import RigDevices
import RigFormat
import RigGPhoto2
import RigRuntime
import RigSky
import RigStepSync

/// `rig play`'s shooting options: the camera, the shot log, resuming and redoing.
struct ShootOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "Shot log of a stepped program, or of a keyframes program shooting on the move (--interval) (JSON Lines). Default: <state dir>/runs/<program>-<UTC time>.jsonl; with --resume, the log to continue.",
            valueName: "file.jsonl"))
    var log: String?

    @Flag(help: "Do not fire the rig's camera in this run (the log is still written).")
    var noShoot = false

    @Flag(help: "Continue the newest unfinished run of this program (same file content) from the step after its last shot, appending to its log.")
    var resume = false

    @Flag(
        help:
            "With --resume: continue although the rig changed where its axes point (a channel, the calibration, \"inverted\") since the run; the rest of the shoot points by the new rig."
    )
    var rigChanged = false

    @Option(help: ArgumentHelp("Start at this step (1-based) instead of the first.", valueName: "N"))
    var fromStep: Int?

    @Option(help: ArgumentHelp("Keyframes programs with a camera: shoot every SECONDS while moving.", valueName: "SECONDS"))
    var interval: Double?

    func validate() throws {
        if let fromStep, fromStep < 1 { throw ValidationError("--from-step \(fromStep): steps count from 1") }
        if rigChanged && !resume { throw ValidationError("--rig-changed goes with --resume") }
        if let interval, !(interval > 0 && interval.isFinite) { throw ValidationError("--interval must be a number of seconds > 0") }
    }
}

/// Everything a play needs for its shots, decided before anything moves.
struct ShootSetup {
    var program: Program
    var plan: ShootingPlan
    /// 0-based.
    var firstStep: Int
    var camera: Camera?
    /// What measures a `"liveView"` settle: the camera's live view (a session part after it).
    var liveViewMotion: LiveViewMotion?
    var runner: ShotRunner?
    var logPath: String?
    private var options: ShootOptions
    private var programPath: String
    private var startPose: [Double]
    private var alreadyShot: Set<Int>
    private var originalStart: ShotLogStart?
    /// The log this run appends to, as it was (a resumed run's): the names its frames use.
    private var earlierLog: ShotLog?
    private var sha: String
    private var directory: RunLogDirectory?

    /// Works out the timing, the interval and where to start (reading the log to resume);
    /// refuses (exit 1 or 2) what cannot be done. Touches no hardware, writes nothing.
    static func plan(_ options: ShootOptions, programPath: String, program: Program, startPose: [Double], trigger: Trigger) throws -> ShootSetup {
        var program = program
        let sha = sha256(of: programPath)
        let shooting = !options.noShoot && trigger != .bui && program.rig.camera != nil
        let timing = shooting ? program.shotTiming : nil
        var plan = program.shootingPlan(timing: timing, selfTimed: program.rig.camera.map { !CameraBackends.reportsShotDone($0) } ?? true, trigger: trigger)
        if let problem = CameraBackends.problem(program) {
            printError("error: \(problem)")
            throw ExitCode(2)
        }
        var firstStep = 0
        var alreadyShot: Set<Int> = []
        var logPath = options.log
        var originalStart: ShotLogStart?
        var earlierLog: ShotLog?

        if program.isStepped {
            plan.pace(by: trigger, stepIntervals: program.stepIntervals)
            if options.interval != nil {
                printError("error: --interval is for keyframes programs; a stepped program takes --trigger interval:SECONDS")
                throw ExitCode(2)
            }
        } else {
            if options.resume || options.fromStep != nil {
                printError("error: --resume and --from-step are for stepped programs (steps, panorama, timelapse)")
                throw ExitCode(2)
            }
            if let s = options.interval {
                guard let timing else {
                    printError(
                        "error: --interval shoots with the rig's camera; \(program.rig.camera == nil ? "the rig has no \"camera\"" : "--no-shoot is set")")
                    throw ExitCode(2)
                }
                let needed = timing.shotSeconds + timing.afterShotSeconds
                guard s >= needed else {
                    printError("error: --interval \(format(s)) s is shorter than one shot and its after-shot wait (\(rounded(needed)) s)")
                    throw ExitCode(1)
                }
                plan.intervalSeconds = s
            }
        }

        let directory = StateDirectory.default().map { RunLogDirectory(stateDirectory: $0) }
        if options.resume {
            do {
                let found = try ResumeLookup.find(
                    program: programPath, sha256: sha, stepCount: program.steps.count, framesPerStep: program.shoot.shotsPerStep,
                    logPath: logPath, directory: directory, rigPointing: program.rig.pointing, acceptRigChange: options.rigChanged)
                for change in found.rigChanges {
                    printError("warning: --rig-changed: \(change); the rest of the shoot points by the new rig")
                }
                originalStart = found.log.lastStart
                earlierLog = found.log
                if let start = originalStart, !start.startAxisNames.isEmpty, start.startAxisNames == program.rig.axes.map(\.name) {
                    // The same shooting order as the run being resumed.
                    program = program.startingFrom(start.startPose)
                }
                firstStep = found.firstStep
                alreadyShot = Set(found.log.completeShots.map { $0.step - 1 })
                logPath = found.path
                say("resuming \(found.path) at step \(firstStep + 1) of \(program.steps.count)")
            } catch {
                printError("error: --resume: \(error)")
                throw ExitCode(1)
            }
        }
        if let n = options.fromStep {
            guard program.isStepped, n <= program.steps.count else {
                printError("error: --from-step \(n): the program has \(program.steps.count) steps")
                throw ExitCode(2)
            }
            firstStep = n - 1
        }

        return ShootSetup(
            program: program, plan: plan, firstStep: firstStep, logPath: logPath, options: options,
            programPath: programPath, startPose: startPose, alreadyShot: alreadyShot, originalStart: originalStart,
            earlierLog: earlierLog, sha: sha, directory: directory)
    }

    /// A keyframes path shot on the move, before this run opens its log: the frames (1…n)
    /// its earlier run in that log shot (this run's `--log`, else the newest log of this
    /// program), when that run did not end (killed, a crash) and was of this program as
    /// it is now; nil otherwise. What a follower restarted during a group's path rejoins
    /// from (`GroupLink.attachEarlierFrames`).
    func earlierPathFrames() -> Int? {
        guard !program.isStepped, plan.intervalSeconds != nil else { return nil }
        let path = logPath ?? directory?.logs(of: programPath).first
        guard let path, FileManager.default.fileExists(atPath: path), let text = try? RigFileReader.readText(path),
            let log = try? ShotLog(text: text, file: path), let start = log.lastStart, start.programSha256 == sha, log.lastRunEnd == nil
        else { return nil }
        // The frames of its last run: the shots after its last start.
        guard let from = log.events.lastIndex(where: { if case .start = $0 { true } else { false } }) else { return nil }
        let frames = log.events[from...].compactMap { event -> Int? in
            if case .shot(let shot) = event, shot.rig == nil, !shot.interrupted { shot.step } else { nil }
        }
        return frames.max() ?? 0
    }

    /// Opens the log and the camera and makes the runner (none for a keyframes program
    /// without `--interval`). The camera opens first, so a setting it cannot take is refused before the log begins; it is closed again if the log cannot be opened.
    /// - Parameter rampNudge: what the keys (`+`, `-`) set and the ramp reads.
    mutating func open(logger: Logger, rampNudge: RampNudge = RampNudge(), speed: Double = 1, display: @escaping @Sendable (String) -> Void) throws {
        let timing = plan.timing
        if program.isStepped || plan.intervalSeconds != nil {
            // The camera first: a setting it cannot take is refused before the log is begun.
            if timing != nil {
                do { camera = try CameraBackends.open(program.rig, logger: logger) } catch {
                    printError("error: camera: \(error)")
                    throw ExitCode(1)
                }
                if let settable = camera as? SettableCamera {
                    try Self.prepareExposure(settable, program: program)
                }
                if let earlierLog, let gphoto2 = camera as? GPhoto2Camera {
                    // A new camera session may number its files from where the lost ones began.
                    gphoto2.reserveNames(earlierLog.shots.flatMap { [$0.downloaded, $0.file].compactMap { $0 } })
                }
            }
            if program.isStepped, let settle = plan.measuredSettle, settle.sensor == .liveView {
                try openLiveViewSettle(settle, speed: speed, logger: logger)
            }
            var writer: ShotLogWriter?
            var logPath = self.logPath
            // A stepped program's frames, or a keyframes path's on the move (`--interval`).
            if program.isStepped || timing != nil {
                let path = logPath ?? directory?.newLogPath(program: programPath)
                if let path {
                    do { writer = try ShotLogWriter(path: path) } catch {
                        camera?.close()
                        printError("error: cannot write the shot log \(path): \(error)")
                        throw ExitCode(1)
                    }
                    if let torn = writer?.tornLine {
                        logger.warning(
                            "the shot log \(path) ended in a torn line (a crash or power cut while it was written): cut off and kept in \(path).torn (\(torn.utf8.count) bytes); every complete event is kept"
                        )
                    }
                    logPath = path
                } else {
                    logger.warning("no state directory for the shot log (set XDG_STATE_HOME or HOME, or give --log FILE): this run keeps none")
                }
            }
            let names = program.rig.axes.map(\.name)
            let start = ShotLogStart(
                program: programPath, programPath: OutputPath.canonical(programPath), programSha256: sha, steps: program.steps.count,
                startedAt: RunLogDirectory.isoStamp(Date()),
                fromStep: firstStep > 0 || options.resume ? firstStep + 1 : nil,
                startAxisNames: originalStart?.startAxisNames ?? names,
                startPose: originalStart?.startPose ?? startPose, rigPointing: program.rig.pointing)
            self.logPath = logPath
            let runner = ShotRunner(
                steps: program.steps, axisNames: names, camera: camera, timing: timing, writer: writer,
                start: writer != nil ? start : nil, alreadyShot: alreadyShot, ramp: program.shoot.ramp, rampNudge: rampNudge, logger: logger,
                display: display)
            if let earlierLog { runner.resumeRamp(from: earlierLog) }
            self.runner = runner
        }
    }

    /// A `"liveView"` settle: the camera's live view measured (`liveViewMotion`), or exit 2
    /// before anything moves when it cannot be (no camera, no live view, no field of view).
    /// A run that does not shoot (`--no-shoot`, a `bui` trigger) opens no camera: each
    /// step's fixed settle applies, and the log says so.
    private mutating func openLiveViewSettle(_ settle: MeasuredSettle, speed: Double, logger: Logger) throws {
        if camera == nil, program.rig.camera != nil {
            plan.measuredSettle = nil
            logger.notice("this run opens no camera, so its live view cannot measure the settle: each step's fixed settleSeconds applies")
            return
        }
        let lens = program.panoramaSpec.map { $0.lens?.sensorFieldOfView.horizontalDegrees ?? $0.fieldOfView.horizontalDegrees }
        switch LiveViewMotion.of(camera: camera, fieldOfViewDegrees: settle.fieldOfViewDegrees ?? lens, speed: speed) {
        case .success(let motion):
            liveViewMotion = motion
            logger.notice(
                "settle: measured in \(motion.sensorName): still below \(format(settle.thresholdDegreesPerSecond)) °/s for \(format(settle.holdSeconds)) s, else the fixed settle after \(format(settle.timeoutSeconds)) s"
            )
        case .failure(let why):
            camera?.close()
            printError("error: \(programPath): the rig's \"settle\": {\"sensor\": \"liveView\"} cannot measure: \(why); nothing moved")
            throw ExitCode(2)
        }
    }

    /// Matches every step's exposure and bracket to the connected camera's choices before
    /// anything moves (exit 2 naming the step and the valid choices), and gives the camera
    /// the frames to shoot. Warns of a low battery.
    static func prepareExposure(_ camera: SettableCamera, program: Program) throws {
        switch camera.prepare(for: program) {
        case .failure(.camera(let error)):
            camera.close()
            printError("error: camera: \(error)")
            throw ExitCode(1)
        case .success(let plan):
            if let bracket = program.shoot.bracket {
                let speeds = plan.programFrames.map { $0.last?.value ?? "?" }
                say("bracket of \(bracket.count) at \(format(bracket.stepEV)) EV: \(speeds.joined(separator: ", "))")
            }
        case .failure(.mismatch(let problem)):
            camera.close()
            printError("error: \(problem)")
            throw ExitCode(2)
        }
        if let battery = (camera as? BatteryReporting)?.battery(), BatteryLevel.isLow(battery) {
            printError("warning: the camera's battery is at \(battery)")
        }
    }

    /// What `rig check` plays: the program's own trigger and the rig's camera, as `rig play`
    /// with no options would.
    static func checkPlan(_ program: Program) -> ShootingPlan {
        var plan = program.shootingPlan(timing: program.trigger == .bui ? nil : program.shotTiming, trigger: program.trigger)
        if program.isStepped { plan.pace(by: program.trigger, stepIntervals: program.stepIntervals) }
        // Nothing measures in a check: it times each step with its fixed settle and prints
        // the settle it expects the measurement to find (`SettleForecast`).
        plan.measuredSettle = nil
        return plan
    }

    /// SHA-256 of the program file's bytes (it was just parsed, so it can be read).
    static func sha256(of path: String) -> String {
        SHA256.hex(FileManager.default.contents(atPath: path) ?? Data())
    }
}
