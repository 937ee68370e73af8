import ArgumentParser
import FoundationEssentials
import Glibc
import RigCore
import RigFormat
import RigSky
import RigStitch

struct PlanCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "plan",
        abstract: "Print the shots (or steps) a stepped program will take, in order.",
        discussion: """
            --format pto writes a Hugin project and --format papywizard Papywizard XML (version "c", \
            which Hugin's and Autopano's importers read), with each shot's yaw and pitch: the rig's pan \
            (positive = right) and tilt (positive = up), as Hugin measures them. csv and json list the \
            shots for scripts. See docs/stitching.md.
            """
    )

    @Argument(help: "A program file (.json).")
    var file: String

    @Flag(help: "Print CSV (index,label,axis positions…) instead of a table: the same as --format csv.")
    var csv = false

    @OptionGroup var stitch: StitchOptions

    @Flag(help: "The clock table: every frame (by default every Nth of a long shoot, about 60 lines).")
    var all = false

    @Option(help: ArgumentHelp("The clock table: every Nth frame (default: all up to 100 frames, else about 60 lines).", valueName: "N"))
    var every: Int?

    func run() throws {
        if csv, let format = stitch.format, format != .csv {
            printError("error: --csv and --format \(format.rawValue) disagree; --csv is --format csv")
            throw ExitCode(2)
        }
        let prepared = try PreparedProgram.load(file)
        let program = prepared.program
        if let track = program.track, !csv, stitch.format == nil || stitch.format == .table {
            try StitchOptions.emit(trackTable(program, track), to: stitch.output, summary: "the track")
            return
        }
        guard program.isStepped else {
            printError(
                FileLoading.errorAt(
                    key: "kind", in: file,
                    "\"\(program.kind.rawValue)\" is a continuous program; `rig plan` prints stepped programs (steps, panorama, timelapse)"
                ).description)
            throw ExitCode(2)
        }
        let checked = try stitch.check(
            defaultFormat: csv ? .csv : .table, allowed: StitchFormat.allCases,
            inputs: PlayCommand.inputFiles(program: file))
        let format = csv ? .csv : checked.format
        var footer: [String] = []
        let project = StitchProject.plan(
            program, lens: stitch.lensOverride(imageSize: checked.imageSize), imageSize: checked.imageSize,
            names: checked.names, firstNumber: stitch.firstNumber)
        if format.needsLens, let problem = project.stitcherProblem {
            let why =
                project.lens == nil
                ? "--format \(format.rawValue) needs the lens's field of view: \(program.kind == .panorama ? "the panorama has no lens" : "a \(program.kind.rawValue) program has no lens (only panorama programs do)"); give --hfov DEGREES (the horizontal field of view of the image as stored)"
                : "--format \(format.rawValue) needs the camera's yaw: \(problem)"
            printError(FileLoading.errorAt(key: program.kind == .panorama ? "panorama" : "kind", in: file, why).description)
            throw ExitCode(2)
        }
        let text = format == .table ? table(program) : StitchOptions.render(project, as: format)
        if format == .table {
            // The shoot's length under the table, as `rig check` times it (on stderr when
            // the table goes to a file, so the file stays the table).
            let report = FeasibilityChecker.check(
                rig: program.rig, motion: program.motion, startPose: prepared.startPose, shooting: ShootSetup.checkPlan(program))
            // With a measured settle, timed with each step's expected settle, as check does.
            let settles = SettleBench.forecast(program, startPose: prepared.startPose)?.steps
            var lines = ShootTime.lines(program, report: report, measured: ShootTime.lastPace(of: file), settles: settles)
            let settleExtra = settles.flatMap { ShootTime.settleExtraSeconds(program, $0) } ?? 0
            if report.unchecked == nil { lines += clockTable(program, totalSeconds: report.durationSeconds + settleExtra) }
            for line in lines {
                if checked.output == nil { footer.append(line) } else { printError(line) }
            }
        }
        try StitchOptions.emit(
            text + footer.map { $0 + "\n" }.joined(), to: checked.output,
            summary: "\(project.shots.count) shot\(project.shots.count == 1 ? "" : "s") as \(format.rawValue)")
    }

    /// The shoot on the clock: its start and end (local and UTC) and total time, then every
    /// Nth frame's time, interval, the sun's altitude (with a site) and planned exposure (with
    /// a ramp). Only for a program paced by an interval (its frames' times are known).
    private func clockTable(_ program: Program, totalSeconds: Double) -> [String] {
        let start = program.start?.unix ?? Date().timeIntervalSince1970
        guard let frames = program.frameClock(trigger: program.trigger, startUnix: start), !frames.isEmpty else { return [] }
        let end = start + totalSeconds
        let from = program.start.map { StartWait.describe($0) } ?? "\(StartWait.localClock(start)) local (now; \(UTCTime.text(start, dateToo: true)))"
        var lines = [
            "clock: starts \(from), ends \(StartWait.localClock(end, now: start)) local (\(UTCTime.text(end, dateToo: true))); total \(ShootTime.duration(totalSeconds))"
        ]
        let step = all ? 1 : max(every ?? (frames.count <= 100 ? 1 : Int((Double(frames.count) / 60).rounded(.up))), 1)
        let hasSun = program.site != nil
        let hasRamp = frames.contains { $0.exposure != nil }
        lines.append(
            "frame  local     UTC           interval" + (hasSun ? "  sun alt" : "") + (hasRamp ? "  exposure" : "")
                + (step > 1 ? "   (every \(step) frames and the last; --all for each)" : ""))
        for f in frames where f.frame % step == 0 || f.frame == frames.count - 1 {
            var line =
                String(f.frame + 1).leftPadded(to: 5) + "  " + StartWait.localClock(f.unix, now: f.unix, seconds: true) + "  "
                + UTCTime.text(f.unix, dateToo: false) + "  " + (fixed(f.intervalSeconds, 1) + " s").leftPadded(to: 8)
            if hasSun { line += "  " + (f.sunAltitude.map { (($0 >= 0 ? "+" : "") + fixed($0, 2)) + "°" } ?? "").leftPadded(to: 7) }
            if let e = f.exposure { line += "  " + Self.exposureText(e) }
            lines.append(line)
        }
        return lines
    }

    /// "1/250 s ISO 100 f/2.8", "4.0 s ISO 1600 f/2.8".
    static func exposureText(_ e: ExposureSettings) -> String {
        let shutter = e.shutterSeconds >= 0.3 ? "\(fixed(e.shutterSeconds, 1)) s" : "1/\(Int((1 / e.shutterSeconds).rounded())) s"
        return "\(shutter) ISO \(Int(e.iso.rounded())) f/\(format(e.aperture))"
    }

    /// A track: the sun's times on the day, then each frame (or key) with the target's place
    /// and the pose.
    private func trackTable(_ program: Program, _ track: SkyTrack) -> String {
        let rig = program.rig
        var lines: [String] = []
        let site = track.site
        let place = "\(fixed(abs(site.latitude), 4))°\(site.latitude >= 0 ? "N" : "S") \(fixed(abs(site.longitude), 4))°\(site.longitude >= 0 ? "E" : "W")"
        let end = track.times.last ?? 0
        lines.append("\(file): track of \(track.target.name) from \(UTCTime.text(track.startUnix, dateToo: true)) for \(rounded(end)) s at \(place)")
        // The sun's times from 12 hours before the start to 12 hours after the end.
        let events = SunTimes.events(site: site, from: track.startUnix - 43_200, to: track.startUnix + end + 43_200)
        lines.append(
            "sun: "
                + (events.isEmpty
                    ? "no rise, set or twilight within 12 h of the track (polar day or night)"
                    : events.map { "\($0.name) \(UTCTime.text($0.unix, dateToo: true))" }.joined(separator: ", ")))
        lines += TrackReport.lines(program)
        let then = track.end?.then == .pan ? "  (panning)" : "  (held)"
        for (i, sample) in track.samples(at: track.times).enumerated() {
            let pose = [(track.mount.azimuthAxis, sample.pan), (track.mount.altitudeAxis, sample.tilt)]
                .map { "\(rig.axes[$0.0].name) \(fixed($0.1, 2))\(rig.axes[$0.0].unit)" }.joined(separator: "  ")
            lines.append(
                String(i + 1).leftPadded(to: 4) + "  " + track.clock(sample.seconds) + "  az " + fixed(sample.position.azimuth, 2).leftPadded(to: 7)
                    + "°  alt " + fixed(sample.position.altitude, 2).leftPadded(to: 6) + "°  " + pose + (sample.following ? "" : then))
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The summary and one line per shot, as `rig plan` has always printed them.
    private func table(_ program: Program) -> String {
        let rig = program.rig
        var lines: [String] = []
        if let plan = program.panorama {
            lines.append(
                "\(file): panorama of \(plan.shots.count) shots in \(plan.rows) row\(plan.rows == 1 ? "" : "s") (\(plan.shotsPerRow.map(String.init).joined(separator: ", ")) per row)"
            )
            lines.append(
                "real overlap: horizontal ≥ \(percent(plan.horizontalOverlap, digits: 1)), vertical \(plan.rows > 1 ? percent(plan.verticalOverlap, digits: 1) : "n/a")"
            )
        } else {
            lines.append("\(file): \(program.steps.count) steps (\(program.kind.rawValue))")
        }
        for (i, step) in program.steps.enumerated() {
            let axes = rig.axes.indices.map { "\(rig.axes[$0].name) \(fixed(step.pose[$0], 2))\(rig.axes[$0].unit)" }.joined(separator: "  ")
            lines.append(String(i + 1).leftPadded(to: 4) + "  " + printable(step.label).padded(toLength: 28) + axes)
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
