import ArgumentParser
import Logging
import RigCore
import RigDevices
import RigFormat
import RigGPhoto2

struct CheckCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Validate a rig or program file and check every frame against the limits.",
        discussion: """
            For a program: plays it through the motion engine (every step advanced at once) and \
            checks every frame against the soft limits, maxVelocity and maxAcceleration of every \
            axis, and the maxJerk of planned moves (lead-in, moves between steps, park; keyframe \
            paths are the user's curves and are not judged on jerk). Prints the worst margin per axis. Exit 0 feasible, 1 infeasible, 2 malformed.
            """
    )

    @Argument(help: "A program or rig file (.json).")
    var file: String

    @Flag(help: "With a gphoto2 camera: connect to it and match the program's exposure and brackets to its choices (exit 2 if a value is not one).")
    var camera = false

    func run() throws {
        // One read, one parse: large programs (a million keyframes) are checked in seconds.
        let loaded: Program
        switch try FileLoading.loadRigOrProgram(file) {
        case .rig(let rig):
            print("\(file): valid rig \"\(rig.name)\": \(rig.axes.count) axes on \(rig.output.type) at \(format(rig.loopRateHz)) Hz")
            for line in ResolutionReport.describe(rig: rig) { print(line) }
            return
        case .program(let program):
            loaded = program
        }
        let prepared = try PreparedProgram.prepare(loaded)
        let program = prepared.program
        let report = FeasibilityChecker.check(
            rig: program.rig, motion: program.motion, startPose: prepared.startPose,
            shooting: ShootSetup.checkPlan(program))
        for line in CheckReport.describe(report, program: program) { print(line) }
        let settles = SettleBench.forecast(program, startPose: prepared.startPose)
        for line in ShootTime.lines(program, report: report, measured: ShootTime.lastPace(of: file), settles: settles?.steps) { print(line) }
        for line in TrackReport.lines(program) { print("\(file): \(line)") }
        for line in ResolutionReport.describe(program: program) { print(line) }
        for line in settleLines(program, settles) { print(line) }
        if let misses = IntervalMiss.summary(report.intervalMisses) { print("\(file): error: \(misses)") }
        if report.intervalMisses.isEmpty, let settles,
            let misses = Self.intervalMissesWithExpectedSettles(program, settles.steps, startPose: prepared.startPose)
        {
            print("\(file): warning: with each step's expected settle (above) instead of its fixed one, \(misses)")
        }
        // What `rig play` and `rig serve` refuse for the rig's camera, refused here too.
        if let problem = CameraBackends.problem(program) {
            printError("\(file): error: \(problem)")
            throw ExitCode(2)
        }
        if let problem = CameraBackends.liveViewSettleProblem(program.rig) {
            printError("\(file): error: \"settle\": \(problem) (rig play refuses it; --no-shoot plays the fixed settle)")
            throw ExitCode(2)
        }
        try checkExposure(program)
        if !report.feasible || !report.intervalMisses.isEmpty { throw ExitCode(1) }
    }

    /// An interval shoot played again with each step's expected settle as its fixed one:
    /// what `rig play` would miss when the head takes longer to be still than the steps'
    /// `settleSeconds` say (nil: it keeps every interval, or no interval paces it).
    static func intervalMissesWithExpectedSettles(_ program: Program, _ settles: [SettleForecast.StepSettle], startPose: [Double]) -> String? {
        guard case .interval = program.trigger, case .stepped(var steps) = program.motion else { return nil }
        for s in settles where steps.indices.contains(s.step) { steps[s.step].settleSeconds = max(steps[s.step].settleSeconds, s.seconds) }
        let report = FeasibilityChecker.check(
            rig: program.rig, motion: .stepped(steps), startPose: startPose, shooting: ShootSetup.checkPlan(program))
        return IntervalMiss.summary(report.intervalMisses)
    }

    /// The forecast's lines (`SettleBench.forecast`).
    private func settleLines(_ program: Program, _ forecast: (steps: [SettleForecast.StepSettle], countsHz: Double?)?) -> [String] {
        guard let settle = program.rig.settle, case .stepped(let steps) = program.motion, let forecast else { return [] }
        let expected = forecast.steps
        // With the ringing's frequency known (the shapers'), the loop judges by its envelope
        // and the hold is not used (`StillnessDetector.init(_:rig:)`): say which.
        let envelope = StillnessDetector(settle, rig: program.rig).envelope != nil
        let still =
            program.rig.settleRingingHz(settle).flatMap { envelope ? $0 : nil }.map {
                "the ringing's envelope (at the shapers' \(format($0)) Hz) below \(format(settle.thresholdDegreesPerSecond)) °/s, no hold"
            } ?? "below \(format(settle.thresholdDegreesPerSecond)) °/s for \(format(settle.holdSeconds)) s"
        let on = forecast.countsHz.map { " (on the output's counts at \(fixed($0, 1)) Hz)" } ?? ""
        var lines = [
            "\(file): settle measured by \(settle.sensor.rawValue): still \(still), timeout \(format(settle.timeoutSeconds)) s; expected per step\(on):"
        ]
        for s in expected where steps.indices.contains(s.step) {
            let fallback = s.measured ? "" : " (not still within the timeout: the fixed \(format(steps[s.step].settleSeconds)) s settle)"
            // A step's label is its own name, or "step N" already (then said once).
            let label = steps[s.step].label
            let name = label == "step \(s.step + 1)" ? label : "step \(s.step + 1) \(elided(label))"
            lines.append("  \(name): \(fixed(s.seconds, 2)) s\(fallback)")
        }
        return lines
    }

    /// The program's exposure and brackets against the camera's own choices, when asked
    /// (`--camera`) and the rig's camera can be reached: the frames each step would shoot.
    private func checkExposure(_ program: Program) throws {
        let asks = program.shoot.exposure != nil || program.shoot.bracket != nil || program.steps.contains { $0.exposure != nil }
        guard asks, let section = program.rig.camera, section.type == GPhoto2CameraConfig.type else { return }
        guard camera else {
            print("\(file): exposure and brackets are matched to the camera's choices by `rig play` (or here with --camera)")
            return
        }
        let connected: GPhoto2Camera
        do { connected = try GPhoto2Camera.open(GPhoto2CameraConfig.parse(section), within: 15, logger: Logger(label: "rig.check")) } catch {
            printError("\(file): error: --camera: \(error)")
            throw ExitCode(1)
        }
        defer { connected.close() }
        let plan: ExposurePlan
        do {
            plan = try ExposurePlan.make(program: program, camera: connected.choices()).get()
        } catch {
            printError("\(file): error: \(error)")
            throw ExitCode(2)
        }
        let frames = plan.programFrames.map { $0.map(\.description).joined(separator: " ") }
        print("\(file): on \(connected.model): every step \(frames.count > 1 ? "brackets " : "")\(frames.joined(separator: " | "))")
        for (step, own) in plan.stepFrames.sorted(by: { $0.key < $1.key }) {
            print("  step \(step + 1): \(own.map { $0.map(\.description).joined(separator: " ") }.joined(separator: " | "))")
        }
    }
}
