import FoundationEssentials
import Glibc
import RigCore
import RigFormat
import RigRuntime

/// What the page's builder sends (`POST /api/programs`, `POST /api/programs/check`):
/// `{"name": "pano.json", "program": {…a program file…}, "overwrite": false}`.
public struct ProgramDraft: Sendable {
    /// The file name to save as (nil: only checked).
    public var name: String?
    /// The program as its file will read (a served rig's path added as `rig` if it has none).
    public var text: String
    public var overwrite: Bool
}

/// A program the page built, as checked (and saved): what `rig plan` and `rig check` say
/// of it, in numbers for the page.
public struct DraftReport: Sendable, Encodable {
    public var file: String?
    public var saved: Bool
    public var kind: String
    public var steps: Int
    /// Steps × shots per step (brackets included); 0 when the rig has no camera.
    public var frames: Int
    public var durationSeconds: Double
    public var feasible: Bool
    public var message: String?
    public var panorama: PanoramaSummary?

    public struct PanoramaSummary: Sendable, Encodable {
        public var rows: Int
        public var shotsPerRow: [Int]
        public var horizontalOverlap: Double
        public var verticalOverlap: Double
    }

    private enum Keys: String, CodingKey { case file, saved, kind, steps, frames, durationSeconds, feasible, message, panorama }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: Keys.self)
        try c.encode(file, forKey: .file)
        try c.encode(saved, forKey: .saved)
        try c.encode(kind, forKey: .kind)
        try c.encode(steps, forKey: .steps)
        try c.encode(frames, forKey: .frames)
        try c.encode(durationSeconds, forKey: .durationSeconds)
        try c.encode(feasible, forKey: .feasible)
        try c.encode(message, forKey: .message)
        try c.encode(panorama, forKey: .panorama)
    }
}

extension ProgramLibrary {
    /// Reads a builder request's body: `name` (a plain `*.json` name, needed to save),
    /// `program` (an object) and `overwrite`. A mistake is a 400 naming the JSON path.
    public func draft(body: [UInt8], needsName: Bool) throws(ServeError) -> ProgramDraft {
        guard let text = String(validating: body, as: UTF8.self) else { throw ServeError(.badRequest, "the body is not UTF-8 text") }
        let file = "body"
        let root: JSONNode
        do { root = try JSONParser.parse(text) } catch { throw ServeError(.badRequest, error.fileError(file: file).description) }
        let name: String?
        let overwrite: Bool
        var program: JSONNode
        do throws(FileError) {
            let object = try ValueReader(root, JSONContext(file: file)).object()
            let nameValue = needsName ? try object.required("name", "the file name to save as, such as pano.json") : object.optional("name")
            name = try nameValue.map { v throws(FileError) in
                let name = try v.nonEmptyString()
                guard Self.isSavableName(name) else {
                    throw v.error(
                        "\"\(elided(name, maxCharacters: 40))\" is not a program file name; valid: a name ending in .json with no / or \\, not starting with . (such as pano.json)"
                    )
                }
                return name
            }
            overwrite = try object.optional("overwrite")?.bool() ?? false
            let programValue = try object.required("program", "the program, as its file would read")
            guard case .object(var members) = programValue.node.value else {
                throw programValue.error("expected the program as an object, found \(programValue.node.value.kindName)")
            }
            try object.finish()
            // The served rig, named as a program file names its rig, unless the page gave one.
            if !members.contains(where: { $0.key == "rig" }) {
                members.insert(
                    JSONMember(
                        name: "rig", keyLocation: programValue.node.location, value: JSONNode(.string(JSONString(savedRigPath)), at: programValue.node.location)
                    ),
                    at: members.first?.key == "$schema" ? 1 : 0)
            }
            program = programValue.node
            program.value = .object(members)
        } catch {
            throw ServeError(.badRequest, error.description)
        }
        return ProgramDraft(name: name, text: JSONText.document(program), overwrite: overwrite)
    }

    /// The served rig as a saved program names it: by its file name when it sits in the
    /// programs folder, else by its full path (so `rig check` finds it from the program).
    var savedRigPath: String {
        let rig = URL(fileURLWithPath: rigPath).standardizedFileURL
        guard let directory else { return rig.path }
        let folder = URL(fileURLWithPath: directory).standardizedFileURL
        return rig.deletingLastPathComponent().path == folder.path ? rig.lastPathComponent : rig.path
    }

    /// A name the builder may save as: a plain `*.json` name in the programs folder.
    static func isSavableName(_ name: String) -> Bool {
        isPlainName(name) && name.hasSuffix(".json") && name.count > 5 && !name.contains("\\")
            && !name.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }
    }

    /// Parses and checks a draft as `rig check` would, from `startPose`: 422 with the
    /// file's `NAME:LINE:COLUMN: error:` line (the line and column in the text it saves)
    /// when it is malformed, for another rig, or infeasible.
    public func check(_ draft: ProgramDraft, startPose: [Double]) throws(ServeError) -> DraftReport {
        let file = draft.name ?? "program.json"
        let prepared: (program: Program, console: HostedProgram, report: FeasibilityReport)
        do {
            prepared = try ServedProgram.prepare(
                text: draft.text, file: file, served: rig, rigText: rigText, rigPath: rigPath, fromStep: 1, startPose: startPose,
                cameraReportsShots: cameraReportsShots)
        } catch {
            throw ServeError(.unprocessableContent, error.description)
        }
        let (program, _, report) = prepared
        let message = report.problems.first?.description ?? report.intervalMisses.first.map { "\($0)" } ?? report.unchecked?.description
        let panorama = program.panorama.map {
            DraftReport.PanoramaSummary(
                rows: $0.rows, shotsPerRow: $0.shotsPerRow, horizontalOverlap: ($0.horizontalOverlap * 1000).rounded() / 1000,
                verticalOverlap: ($0.verticalOverlap * 1000).rounded() / 1000)
        }
        return DraftReport(
            file: draft.name, saved: false, kind: program.kind.rawValue, steps: program.steps.count, frames: program.frameCount,
            durationSeconds: (report.durationSeconds * 10).rounded() / 10, feasible: message == nil, message: message, panorama: panorama)
    }

    /// Checks a draft and saves it as `draft.name` in the programs folder, atomically: 409
    /// when that file exists and `overwrite` is not set, 422 (nothing written) when the
    /// program is malformed or infeasible.
    public func save(_ draft: ProgramDraft, startPose: [Double]) throws(ServeError) -> DraftReport {
        guard let directory else { throw ServeError(.notFound, "the server has no --programs directory to save into (start rig serve with --programs DIR)") }
        guard let name = draft.name else { throw ServeError(.badRequest, "$.name: the file name to save as") }
        var report = try check(draft, startPose: startPose)
        if let message = report.message {
            throw ServeError(.unprocessableContent, "\(name): not saved: \(message)")
        }
        let path = directory + "/" + name
        var status = stat()
        if lstat(path, &status) == 0 {
            guard (status.st_mode & S_IFMT) == S_IFREG else { throw ServeError(.conflict, "\(name) exists in the programs folder and is not a file") }
            // The rig file may sit among the programs: never replaced by a program.
            if Self.isRig(at: path) || URL(fileURLWithPath: path).standardizedFileURL == URL(fileURLWithPath: rigPath).standardizedFileURL {
                throw ServeError(.conflict, "\(name) is a rig file in the programs folder; choose another name")
            }
            guard draft.overwrite else {
                throw ServeError(.conflict, "\(name) exists in the programs folder; choose another name, or send \"overwrite\": true to replace it")
            }
        }
        do {
            try AtomicFile.write(draft.text, to: path)
        } catch {
            throw ServeError(.internalServerError, "cannot save \(name): \(error)")
        }
        report.saved = true
        return report
    }
}
