import ArgumentParser
import Foundation
import RigCore

/// Reads rig and program files and turns every problem into the compiler-style line
/// and exit code 2.
enum FileLoading {
    static func readText(_ path: String) throws(FileError) -> String {
        guard let data = FileManager.default.contents(atPath: path) else {
            let reason = FileManager.default.fileExists(atPath: path) ? "cannot read the file (permissions?)" : "no such file"
            throw FileError(file: path, location: SourceLocation(line: 1, column: 1), path: "$", message: reason)
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw FileError(file: path, location: SourceLocation(line: 1, column: 1), path: "$", message: "the file is not UTF-8 text")
        }
        return text
    }

    /// Resolves a rig path written in a program, relative to the program's folder.
    static func rigLoader(programPath: String) -> ProgramParser.RigLoader {
        { path, value throws(FileError) in
            let base = (programPath as NSString).deletingLastPathComponent
            let resolved = path.hasPrefix("/") || base.isEmpty ? path : (base as NSString).appendingPathComponent(path)
            guard FileManager.default.fileExists(atPath: resolved) else {
                throw value.error("rig file \"\(path)\" not found (looked for \(resolved); paths are relative to the program file)")
            }
            return (try readText(resolved), resolved)
        }
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
                let text = try readText(path)
                do { return try JSONParser.parse(text) } catch { throw error.fileError(file: path) }
            }
            let root = try parsed()
            if looksLikeRig(root: root) { return .rig(try RigParser.parse(ValueReader(root, JSONContext(file: path)))) }
            return .program(try ProgramParser.parse(root: root, file: path, loadRig: rigLoader(programPath: path)))
        } catch {
            printError(error.description)
            throw ExitCode(2)
        }
    }

    static func loadProgram(_ path: String) throws(ExitCode) -> Program {
        do {
            return try ProgramParser.parse(text: readText(path), file: path, loadRig: rigLoader(programPath: path))
        } catch {
            printError(error.description)
            throw ExitCode(2)
        }
    }

    static func loadRig(_ path: String) throws(ExitCode) -> Rig {
        do {
            return try RigParser.parse(text: readText(path), file: path)
        } catch {
            printError(error.description)
            throw ExitCode(2)
        }
    }
}
