import ArgumentParser
import FoundationEssentials
import Glibc
import RigCore
import RigDevices
import RigFormat
import RigRuntime
import SystemPackage

/// Reads rig and program files and turns every problem into the compiler-style line
/// and exit code 2.
enum FileLoading {
    static let maxFileBytes = RigFileReader.maxFileBytes

    /// The file as text (see `readBytes`).
    static func readText(_ path: String) throws(FileError) -> String {
        try RigFileReader.readText(path)
    }

    /// A rig or program file's bytes (`RigFileReader`).
    static func readBytes(_ path: String) throws(FileError) -> [UInt8] {
        try RigFileReader.readBytes(path)
    }

    /// An error about a top-level key of a file that already parsed (`rig plan` of a
    /// continuous program): `FILE:LINE:COL: error: $.KEY: message`, at the key's value
    /// (line 1, column 1 if the file no longer has it).
    static func errorAt(key: String, in path: String, _ message: String) -> FileError {
        var location = SourceLocation(line: 1, column: 1)
        if let bytes = try? readBytes(path) {
            var parser = JSONParser(bytes: bytes)
            if let root = try? parser.parseDocument(), case .object(let members) = root.value,
                let member = members.first(where: { $0.key == key })
            {
                location = member.value.location
            }
        }
        return FileError(file: path, location: location, path: "$.\(key)", message: message)
    }

    /// Resolves a rig path written in a program, relative to the program's folder.
    static func rigLoader(programPath: String) -> ProgramParser.RigLoader {
        { path, value throws(FileError) in
            let base = FilePath(programPath).removingLastComponent().string
            let resolved = path.hasPrefix("/") || base.isEmpty ? path : FilePath(base).appending(path).string
            guard FileManager.default.fileExists(atPath: resolved) else {
                throw value.error("rig file \"\(elided(path))\" not found (looked for \(elided(resolved)); paths are relative to the program file)")
            }
            if sameFile(resolved, programPath) {
                throw value.error("\"\(elided(path))\" is this program file itself; \"rig\" must name a rig file (with \"axes\") or be a rig object")
            }
            let text = try readText(resolved)
            if let root = try? JSONParser.parse(text), !looksLikeRig(root: root), case .object(let members) = root.value,
                members.contains(where: { $0.key == "kind" })
            {
                throw value.error("\"\(elided(path))\" is a program file, not a rig file; \"rig\" must name a rig file (with \"axes\") or be a rig object")
            }
            return (text, resolved)
        }
    }

    /// Whether two paths name the same file (same device and inode).
    static func sameFile(_ a: String, _ b: String) -> Bool {
        var sa = stat()
        var sb = stat()
        guard stat(a, &sa) == 0, stat(b, &sb) == 0 else { return false }
        return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino
    }

    /// Whether a JSON file is a rig (has `axes` at the top) rather than a program.
    static func looksLikeRig(_ text: String) -> Bool {
        guard let root = try? JSONParser.parse(text) else { return false }
        return looksLikeRig(root: root)
    }

    static func looksLikeRig(root: JSONNode) -> Bool {
        guard case .object(let members) = root.value else { return false }
        return members.contains { $0.key == "axes" } && !members.contains { $0.key == "kind" }
    }

    enum RigOrProgram {
        case rig(Rig)
        case program(Program)
    }

    /// Reads and parses a file once and returns the rig or the program it holds (a file
    /// with `axes` and no `kind` at the top is a rig).
    static func loadRigOrProgram(_ path: String) throws(ExitCode) -> RigOrProgram {
        do throws(FileError) {
            // The text goes as soon as it is parsed: a large file's text, tree and tracks
            // need not all be alive at once.
            func parsed() throws(FileError) -> JSONNode {
                var parser = JSONParser(bytes: try readBytes(path))
                do { return try parser.parseDocument() } catch { throw error.fileError(file: path) }
            }
            let root = try parsed()
            if looksLikeRig(root: root) { return .rig(try devicesChecked(RigParser.parse(ValueReader(root, JSONContext(file: path))))) }
            let program = try ProgramParser.parse(root: root, file: path, loadRig: rigLoader(programPath: path))
            _ = try devicesChecked(program.rig)
            return .program(program)
        } catch {
            printError(error.description)
            throw ExitCode(2)
        }
    }

    /// The rig, once each device's own module has read its section (`OutputDrivers`,
    /// `CameraBackends`).
    static func devicesChecked(_ rig: Rig) throws(FileError) -> Rig {
        try Devices.check(rig)
        return rig
    }

    static func loadProgram(_ path: String) throws(ExitCode) -> Program {
        do {
            let program = try ProgramParser.parse(text: readText(path), file: path, loadRig: rigLoader(programPath: path))
            _ = try devicesChecked(program.rig)
            return program
        } catch {
            printError(error.description)
            throw ExitCode(2)
        }
    }

    static func loadRig(_ path: String) throws(ExitCode) -> Rig {
        do {
            return try devicesChecked(RigParser.parse(text: readText(path), file: path))
        } catch {
            printError(error.description)
            throw ExitCode(2)
        }
    }
}
