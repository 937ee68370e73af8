import ArgumentParser
import FoundationEssentials
import Glibc
import RigCore
import RigFormat
import RigRuntime
import RigStitch
import SystemPackage

/// What `rig plan` and `rig export` write.
enum StitchFormat: String, ExpressibleByArgument, CaseIterable {
    /// `rig plan`'s table (plan only).
    case table
    case csv
    case json
    /// A Hugin project.
    case pto
    /// Papywizard XML, version "c".
    case papywizard
    /// One XMP sidecar per frame (export only): `-o` is a directory.
    case xmp

    /// The format a file name asks for, by its extension.
    static func inferred(from path: String) -> StitchFormat? {
        switch (FilePath(path).extension ?? "").lowercased() {
        case "pto": .pto
        case "xml": .papywizard
        case "csv": .csv
        case "json": .json
        case "txt": .table
        default: nil
        }
    }

    var needsLens: Bool { self == .pto || self == .papywizard }
}

/// The options `rig plan` and `rig export` share: where to write, and how to name and size
/// the images in a stitcher file. Everything is checked before anything is written.
struct StitchOptions: ParsableArguments {
    @Option(
        name: .customLong("format"),
        help: ArgumentHelp(
            "What to write (table: rig plan only; xmp: rig export only, one sidecar per frame). Default: from the -o file's extension (.pto, .xml, .csv, .json, .txt), else a table (plan).",
            valueName: "format"))
    var format: StitchFormat?

    @Option(
        name: [.customShort("o"), .customLong("output")],
        help: ArgumentHelp(
            "Write to this file (replaced atomically) instead of stdout. Never one of the input files. With --format xmp: the directory the sidecars go in (default: beside each downloaded frame).",
            valueName: "file"))
    var output: String?

    @Option(
        help: ArgumentHelp(
            "Image file names, with one integer conversion for the camera's file number. Default: IMG_%04d.JPG; export: the names the camera reported (gphoto2), else this.",
            valueName: "pattern"))
    var names: String?

    @Option(help: ArgumentHelp("The camera's file number of the first image (plan: of step 1; export: of the log's first take).", valueName: "n"))
    var firstNumber = 1

    @Option(
        help: ArgumentHelp(
            "The images' size in pixels, as the camera stores them (landscape). Default: 6000 wide, as high as the lens's aspect ratio (6000x4000 for 3:2).",
            valueName: "WxH"))
    var imageSize: String?

    @Option(
        help: ArgumentHelp(
            "The lens's horizontal field of view in degrees (of the image as stored, landscape), for programs without a lens (steps, timelapse) or to override the program's.",
            valueName: "degrees"))
    var hfov: Double?

    /// The checked options: a usage problem is printed and exits 2.
    struct Checked {
        var format: StitchFormat
        var names: ImageNamePattern
        /// True when `--names` was given: it wins over the names a shot log carries.
        var namesGiven: Bool
        var imageSize: PixelSize?
        var output: String?
    }

    /// Checks every option and the output path (against `inputs`) before anything is written.
    func check(defaultFormat: StitchFormat?, allowed: [StitchFormat], inputs: [String]) throws(ExitCode) -> Checked {
        func usage(_ message: String) -> ExitCode {
            printError("error: \(message)")
            return ExitCode(2)
        }
        guard let chosen = format ?? output.flatMap(StitchFormat.inferred) ?? defaultFormat else {
            throw usage(
                "give --format (\(allowed.map(\.rawValue).joined(separator: ", "))); \(output.map { "-o \($0) has no extension that says which" } ?? "there is no -o file to infer it from")"
            )
        }
        guard allowed.contains(chosen) else {
            throw usage("--format \(chosen.rawValue) is not available here; valid: \(allowed.map(\.rawValue).joined(separator: ", "))")
        }
        let pattern: ImageNamePattern
        do { pattern = try ImageNamePattern(names ?? "IMG_%04d.JPG") } catch { throw usage("--names \(error)") }
        guard firstNumber >= 0, firstNumber <= 1_000_000_000 else { throw usage("--first-number \(firstNumber) is out of range; valid: 0…1000000000") }
        var size: PixelSize?
        if let imageSize {
            guard let parsed = PixelSize(imageSize) else {
                throw usage("--image-size \"\(imageSize)\" is not WIDTHxHEIGHT in pixels; valid: e.g. 6000x4000, each 1…1000000")
            }
            // Cameras store images landscape (the long side is the width); a camera turned
            // on the head is the program's lens "orientation": "portrait", which sets the
            // roll. A portrait size would give Hugin a wrong field of view and roll.
            guard parsed.width >= parsed.height else {
                throw usage(
                    "--image-size \(parsed) is portrait; give the size as the camera stores it, landscape (\(parsed.height)x\(parsed.width)); a camera turned on the head is the lens's \"orientation\": \"portrait\""
                )
            }
            size = parsed
        }
        if let hfov, !(1...179).contains(hfov) {
            throw usage("--hfov \(RigFormat.format(hfov)) is out of range; valid: 1…179 (degrees, rectilinear lenses)")
        }
        if let output {
            do {
                // Sidecars go into a directory (made if missing), each checked as it is named.
                if chosen == .xmp { _ = try OutputPath.checkFolder(output, option: "-o") } else { try OutputPath.check(output, option: "-o", inputs: inputs) }
            } catch { throw usage("\(error)") }
        }
        return Checked(format: chosen, names: pattern, namesGiven: names != nil, imageSize: size, output: output)
    }

    /// The lens `--hfov` describes, if given.
    func lensOverride(imageSize: PixelSize?) -> CameraLens? {
        hfov.map { CameraLens(horizontalDegrees: $0, imageSize: imageSize ?? PixelSize(width: PixelSize.defaultWidth, height: 4000)) }
    }

    /// The text of `project` in `format` (`table` is the plan's own). Callers refuse a
    /// stitcher format when `project.stitcherProblem` says why it cannot be written.
    static func render(_ project: StitchProject, as format: StitchFormat) -> String {
        switch format {
        case .csv, .table: return ShotListWriter.csv(project)
        case .xmp: return ""  // one file per frame: `rig export` writes them itself
        case .json: return ShotListWriter.json(project)
        case .pto, .papywizard:
            // Callers check `stitcherProblem` first; a lens is there.
            guard let lens = project.lens else { return "" }
            return format == .pto ? HuginProjectWriter.text(project, lens: lens) : PapywizardWriter.text(project, lens: lens)
        }
    }

    /// Writes `text` to the checked `-o` file, atomically, or to stdout.
    static func emit(_ text: String, to output: String?, summary: String) throws(ExitCode) {
        guard let output else {
            StandardStreams.out(text)
            return
        }
        do { try AtomicFile.write(text, to: output) } catch {
            printError("error: -o \(output): \(error)")
            throw ExitCode(1)
        }
        say("wrote \(output): \(summary)")
    }
}
