import ArgumentParser
import FoundationEssentials
import Glibc
import RigCore
import RigRuntime
import RigStitch
import SystemPackage

struct ExportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write a shot log's shots for a stitcher (Hugin .pto, Papywizard XML), as CSV/JSON, or as one XMP sidecar per frame.",
        discussion: """
            The shots are the poses really sent, one image per step (and bracket) in the order the steps \
            were shot; a step shot again (a redo) counts once, with its last take. The camera numbers \
            every take, so images are named from --first-number in the order of all takes in the log. \
            pto and papywizard need the lens: from --program FILE, else the program the log's start \
            event names, else --hfov. --format xmp writes one sidecar per frame (IMG_0001.JPG → \
            IMG_0001.xmp) beside each downloaded frame, or into -o DIR, with its exposure and true \
            time; an existing sidecar is never replaced without --force. See docs/stitching.md.
            """
    )

    @Argument(help: "A shot log (.jsonl) written by rig play.")
    var log: String

    @Option(help: ArgumentHelp("The program the log ran (default: the path in the log's start event).", valueName: "file"))
    var program: String?

    @OptionGroup var stitch: StitchOptions

    @Flag(help: "--format xmp: replace sidecars that exist (Lightroom's and LRTimelapse's edits in them are lost).")
    var force = false

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
        let checked = try stitch.check(defaultFormat: nil, allowed: [.pto, .papywizard, .csv, .json, .xmp], inputs: inputs)
        guard !shotLog.shots.isEmpty else {
            printError("\(log): error: the log has no shot to export (\(shotLog.events.count) event\(shotLog.events.count == 1 ? "" : "s"), no \"shot\")")
            throw ExitCode(2)
        }
        let project = StitchProject.export(
            shotLog, file: log, program: loaded, lens: stitch.lensOverride(imageSize: checked.imageSize ?? StitchProject.firstLoggedImageSize(shotLog)),
            imageSize: checked.imageSize, names: checked.names, firstNumber: stitch.firstNumber, loggedNames: !checked.namesGiven)
        if checked.format == .xmp {
            try writeSidecars(project, into: checked.output, inputs: inputs)
            return
        }
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

    /// One XMP sidecar per frame: into `directory`, else beside each downloaded frame (a
    /// frame not downloaded has none then). Every path is checked, and none may exist
    /// without --force, before the first is written.
    private func writeSidecars(_ project: StitchProject, into directory: String?, inputs: [String]) throws(ExitCode) {
        var targets: [(shot: StitchShot, path: String)] = []
        var notDownloaded = 0
        var missing: [String] = []
        for shot in project.shots {
            if let directory {
                let path = FilePath(directory).appending(XMPSidecarWriter.sidecarName(forImage: shot.downloaded ?? shot.imageName)).string
                targets.append((shot, path))
            } else if let downloaded = shot.downloaded {
                guard let image = resolveImage(downloaded) else {
                    missing.append(downloaded)
                    continue
                }
                let path = FilePath(image).removingLastComponent().appending(
                    XMPSidecarWriter.sidecarName(forImage: image)
                ).string
                targets.append((shot, path))
            } else {
                notDownloaded += 1
            }
        }
        func list(_ paths: [String]) -> String {
            paths.prefix(3).joined(separator: ", ") + (paths.count > 3 ? " and \(paths.count - 3) more" : "")
        }
        if !missing.isEmpty {
            printError(
                "\(log): error: \(missing.count) downloaded frame\(missing.count == 1 ? " is" : "s are") not where the log says (\(list(missing))): run rig export from where rig play ran, or give -o DIR to write the sidecars there"
            )
            throw ExitCode(2)
        }
        guard !targets.isEmpty else {
            printError(
                "\(log): error: no frame was downloaded (the camera's \"download\" folder), so there is nothing to put a sidecar beside; give -o DIR to write one per frame there, named as the camera named it"
            )
            throw ExitCode(2)
        }
        var seen: [String: Int] = [:]
        for target in targets {
            let key = OutputPath.canonical(target.path)
            if let other = seen[key] {
                printError(
                    "\(log): error: steps \(other) and \(target.shot.step) would both write \(target.path) (two frames of one name); give -o DIR per run")
                throw ExitCode(2)
            }
            seen[key] = target.shot.step
            do { try OutputPath.check(target.path, option: "sidecar", inputs: inputs) } catch {
                printError("error: \(error)")
                throw ExitCode(2)
            }
        }
        let existing = targets.map(\.path).filter { FileManager.default.fileExists(atPath: $0) }
        if !existing.isEmpty, !force {
            printError(
                "\(log): error: \(existing.count) sidecar\(existing.count == 1 ? "" : "s") exist\(existing.count == 1 ? "s" : "") (\(list(existing))) and may hold Lightroom's or LRTimelapse's edits; nothing was written. Give --force to replace \(existing.count == 1 ? "it" : "them"), or -o DIR for another folder"
            )
            throw ExitCode(2)
        }
        for target in targets {
            do { try AtomicFile.write(XMPSidecarWriter.text(target.shot, axisNames: project.axisNames), to: target.path) } catch {
                printError("error: sidecar \(target.path): \(error)")
                throw ExitCode(1)
            }
        }
        if notDownloaded > 0 {
            printError(
                "\(log): warning: \(notDownloaded) frame\(notDownloaded == 1 ? " was" : "s were") not downloaded and \(notDownloaded == 1 ? "has" : "have") no sidecar; give -o DIR to write one per frame, named as the camera named it"
            )
        }
        let place = directory.map { "in \($0)" } ?? "beside the frames"
        say(
            "wrote \(targets.count) XMP sidecar\(targets.count == 1 ? "" : "s") \(place)\(existing.isEmpty ? "" : " (\(existing.count) replaced)")\(project.shots.contains { $0.time == nil } ? "; the log has no time for some frames" : "")"
        )
    }

    /// A downloaded frame's path from the log: as written if it exists (relative to where
    /// `rig play` ran), else next to the log; nil when it is in neither place.
    private func resolveImage(_ path: String) -> String? {
        if FileManager.default.fileExists(atPath: path) { return path }
        if path.hasPrefix("/") { return nil }
        let besideLog = FilePath(log).removingLastComponent().appending(path).string
        return FileManager.default.fileExists(atPath: besideLog) ? besideLog : nil
    }

    /// A program path from the log: as written if it exists, else next to the log.
    private func resolve(_ path: String) -> String {
        if path.hasPrefix("/") || FileManager.default.fileExists(atPath: path) { return path }
        let besideLog = FilePath(log).removingLastComponent().appending(path).string
        return FileManager.default.fileExists(atPath: besideLog) ? besideLog : path
    }
}
