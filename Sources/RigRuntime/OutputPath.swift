import Foundation
import Glibc

/// An output path (`--trace`, `--record`, `-o`) that cannot be used.
public struct OutputPathError: Error, Sendable, CustomStringConvertible {
    public var option: String
    public var path: String
    public var problem: String

    public init(option: String, path: String, problem: String) {
        self.option = option
        self.path = path
        self.problem = problem
    }

    public var description: String { "\(option) \(path): \(problem)" }
}

/// Checks output paths before anything moves, so a bad one is refused up front (exit 2)
/// instead of failing after the output started.
public enum OutputPath {
    /// Refuses `path` for `option` if it is empty, names a directory, a FIFO, a device or
    /// anything but a regular file (those block or never end), lies in a directory that
    /// does not exist or cannot be written, or is one of the run's `inputs`.
    /// - Parameter mustNotExist: also refuse an existing file (`--record` starts a new program).
    public static func check(_ path: String, option: String, inputs: [String], mustNotExist: Bool = false) throws(OutputPathError) {
        func fail(_ problem: String) -> OutputPathError { OutputPathError(option: option, path: path, problem: problem) }
        guard !path.isEmpty else { throw fail("the path is empty") }
        let target = canonical(path)
        var st = stat()
        let exists = stat(path, &st) == 0
        // The same file by its path, or by its identity (a hard link or a bind mount names
        // one file twice: its device and inode are what they share).
        for input in inputs {
            var inputStat = stat()
            let sameFile = exists && stat(input, &inputStat) == 0 && inputStat.st_dev == st.st_dev && inputStat.st_ino == st.st_ino
            if sameFile || canonical(input) == target {
                throw fail("is one of this run's input files; writing there would destroy it")
            }
        }
        if exists {
            if mustNotExist { throw fail("the file exists; give a new file") }
            switch st.st_mode & S_IFMT {
            case S_IFREG: break
            case S_IFDIR: throw fail("is a directory; give a file name")
            case S_IFIFO: throw fail("is a FIFO; give a regular file (a FIFO blocks until someone reads it)")
            default: throw fail("is not a regular file (a device or socket); give a regular file")
            }
            if access(path, W_OK) != 0 { throw fail("cannot be written (\(String(cString: strerror(errno))))") }
        } else {
            let parent = parentDirectory(path)
            var dir = stat()
            guard stat(parent, &dir) == 0, dir.st_mode & S_IFMT == S_IFDIR else {
                throw fail("the directory \(parent) does not exist")
            }
            if access(parent, W_OK) != 0 { throw fail("cannot create a file in \(parent) (\(String(cString: strerror(errno))))") }
        }
    }

    static func parentDirectory(_ path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        let parent = String(path[..<slash])
        return parent.isEmpty ? "/" : parent
    }

    /// The real path of a file, or of its directory plus its name when it does not exist yet.
    static func canonical(_ path: String) -> String {
        if let real = realpath(path, nil) {
            defer { free(real) }
            return String(cString: real)
        }
        let name = path.lastIndex(of: "/").map { String(path[path.index(after: $0)...]) } ?? path
        guard let real = realpath(parentDirectory(path), nil) else { return path }
        defer { free(real) }
        return String(cString: real) + "/" + name
    }
}
