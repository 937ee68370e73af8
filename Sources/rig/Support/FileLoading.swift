import ArgumentParser
import Foundation
import RigCore

/// Reads rig and program files and turns every problem into the compiler-style line
/// and exit code 2.
enum FileLoading {
    /// Rig and program files are small, but a generated keyframe program can be long (one
    /// with 1,000,000 keyframes is 55 MB, and `rig check` must take it); anything bigger is
    /// not one, and must not be read into memory whole.
    static let maxFileBytes = 64 << 20

    /// The file as text (see `readBytes`).
    static func readText(_ path: String) throws(FileError) -> String {
        String(decoding: try readBytes(path), as: UTF8.self)
    }

    /// A rig or program file's bytes, checked to be UTF-8 (an error names the first bad
    /// byte's line and column), for the JSON parser to read without a String copy.
    static func readBytes(_ path: String) throws(FileError) -> [UInt8] {
        func fail(_ message: String) -> FileError {
            FileError(file: path, location: SourceLocation(line: 1, column: 1), path: "$", message: message)
        }
        // O_NONBLOCK: opening a FIFO with no writer must not wait; fstat on the open file
        // (not stat on the name) so what is checked is what is read.
        let fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else {
            let code = errno
            switch code {
            case ENOENT: throw fail("no such file")
            case EACCES, EPERM: throw fail("cannot read the file: permission denied")
            case ENOTDIR: throw fail("no such file (a part of the path is not a directory)")
            default: throw fail("cannot open the file: \(String(cString: strerror(code)))")
            }
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw fail("cannot read the file: \(String(cString: strerror(errno)))") }
        switch info.st_mode & S_IFMT {
        case S_IFREG: break
        case S_IFDIR: throw fail("is a directory, not a rig or program file")
        case S_IFIFO: throw fail("is a FIFO (named pipe), not a regular file; rig and program files must be regular files")
        case S_IFCHR, S_IFBLK: throw fail("is a device, not a regular file; rig and program files must be regular files")
        case S_IFSOCK: throw fail("is a socket, not a regular file")
        default: throw fail("is not a regular file")
        }
        guard info.st_size <= maxFileBytes else {
            throw fail("the file is \(info.st_size) bytes; valid: at most \(maxFileBytes) bytes for a rig or program file")
        }
        // Read to the end but never past the bound (the size can change under us).
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        while bytes.count <= maxFileBytes {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw fail("cannot read the file: \(String(cString: strerror(errno)))")
            }
            if n == 0 { break }
            bytes.append(contentsOf: chunk[0..<n])
        }
        guard bytes.count <= maxFileBytes else {
            throw fail("the file is more than \(maxFileBytes) bytes; valid: at most \(maxFileBytes) bytes for a rig or program file")
        }
        try UTF8Text.validate(bytes, file: path)
        return bytes
    }

    /// Resolves a rig path written in a program, relative to the program's folder.
    static func rigLoader(programPath: String) -> ProgramParser.RigLoader {
        { path, value throws(FileError) in
            let base = (programPath as NSString).deletingLastPathComponent
            let resolved = path.hasPrefix("/") || base.isEmpty ? path : (base as NSString).appendingPathComponent(path)
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
