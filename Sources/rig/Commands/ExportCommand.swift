import ArgumentParser
import Foundation
import RigCore

struct ExportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write a shot log's shots for a stitcher (Hugin .pto, Papywizard XML) or as CSV/JSON.",
        discussion: """
            The shots are the poses really sent, one image per step (and bracket) in the order the steps \
            were shot; a step shot again (a redo) counts once, with its last take. The camera numbers \
            every take, so images are named from --first-number in the order of all takes in the log. \
            pto and papywizard need the lens: from --program FILE, else the program the log's start \
            event names, else --hfov. See docs/stitching.md.
            """
    )

    @Argument(help: "A shot log (.jsonl) written by rig play.")
    var log: String

    @Option(help: ArgumentHelp("The program the log ran (default: the path in the log's start event).", valueName: "file"))
    var program: String?

    @OptionGroup var stitch: StitchOptions

    func run() throws {
        let shotLog: ShotLog
        do {
            shotLog = try ShotLog(text: FileLoading.readText(log), file: log)
        } catch {
            printError(error.description)
            throw ExitCode(2)
        }
        if let torn = shotLog.tornLastLine {
            printError("\(log): warning: the last line is cut short (the run was interrupted while writing it) and is left out: \(torn.prefix(60))")
        }
        // The program: given, or named by the log (as given to `rig play`: relative to where
        // it ran, so also tried next to the log).
        let named = program ?? shotLog.lastStart?.program
        let programPath = named.map(resolve)
        var loaded: Program?
        var programProblem: String?
        if let programPath {
            do {
                loaded = try ProgramParser.parse(
                    text: FileLoading.readText(programPath), file: programPath,
                    loadRig: FileLoading.rigLoader(programPath: programPath))
            } catch {
                programProblem = error.description
            }
        }
        if let loaded, let programPath, let start = shotLog.lastStart, ShootSetup.sha256(of: programPath) != start.programSha256 {
            printError(
                "\(log): warning: \(loaded.file) has changed since the run (its SHA-256 is not the log's); the lens and axes come from the file as it is now")
        }
        if program != nil, let programProblem {
            // Asked for by name: a broken program is an error whatever the format.
            printError(programProblem)
            throw ExitCode(2)
        }
        var inputs = [log]
        if let programPath { inputs += PlayCommand.inputFiles(program: programPath) }
        let checked = try stitch.check(defaultFormat: nil, allowed: [.pto, .papywizard, .csv, .json], inputs: inputs)
        guard !shotLog.shots.isEmpty else {
            printError("\(log): error: the log has no shot to export (\(shotLog.events.count) event\(shotLog.events.count == 1 ? "" : "s"), no \"shot\")")
            throw ExitCode(2)
        }
        let project = StitchProject.export(
            shotLog, file: log, program: loaded, lens: stitch.lensOverride(imageSize: checked.imageSize ?? StitchProject.firstLoggedImageSize(shotLog)),
            imageSize: checked.imageSize, names: checked.names, firstNumber: stitch.firstNumber, loggedNames: !checked.namesGiven)
        if checked.format.needsLens, let problem = project.stitcherProblem {
            let why: String
            if project.lens != nil {
                why = "each shot's pan: \(problem)"
            } else if let named, let programProblem {
                why =
                    "the lens, and the log's program \"\(named)\" cannot be read (\(programProblem)); give --program FILE (the program the log ran) or --hfov DEGREES"
            } else if let loaded {
                why =
                    "the lens, and \"\(loaded.file)\" is a \(loaded.kind.rawValue) program, which has none (only panorama programs have a lens); give --hfov DEGREES (the horizontal field of view of the image as stored)"
            } else {
                why = "the lens, and the log names no program; give --program FILE or --hfov DEGREES"
            }
            printError("\(log): error: --format \(checked.format.rawValue) needs \(why)")
            throw ExitCode(2)
        }
        let redone = shotLog.shots.count - project.shots.count
        try StitchOptions.emit(
            StitchOptions.render(project, as: checked.format), to: checked.output,
            summary:
                "\(project.shots.count) image\(project.shots.count == 1 ? "" : "s") as \(checked.format.rawValue)\(redone > 0 ? " (\(redone) earlier take\(redone == 1 ? "" : "s") of redone steps left out)" : "")"
        )
    }

    /// A program path from the log: as written if it exists, else next to the log.
    private func resolve(_ path: String) -> String {
        if path.hasPrefix("/") || FileManager.default.fileExists(atPath: path) { return path }
        let besideLog = ((log as NSString).deletingLastPathComponent as NSString).appendingPathComponent(path)
        return FileManager.default.fileExists(atPath: besideLog) ? besideLog : path
    }
}
