import Foundation
import Glibc
import SystemPackage

/// The one way rig replaces a file (recorded programs, remembered poses, the last board):
/// a crash or power cut leaves either the old or the new content, never a torn mix. A
/// temporary file in the same directory, written and `fsync`ed, `rename`d over the target,
/// then the directory `fsync`ed so the rename is durable.
public enum AtomicFile {
    /// Why a save failed, with the path and the errno.
    public struct WriteError: Error, Sendable, CustomStringConvertible {
        public var path: String
        public var step: String
        public var errno: Errno
        public var description: String { "cannot save \(path): \(step) failed: \(errno)" }
    }

    public static func write(_ text: String, to path: String, createDirectory: Bool = false) throws(WriteError) {
        try write(Array(text.utf8), to: path, createDirectory: createDirectory)
    }

    /// - Parameter createDirectory: create the file's directory (and its parents) first.
    public static func write(_ bytes: [UInt8], to path: String, createDirectory: Bool = false) throws(WriteError) {
        let file = FilePath(path)
        let directory = file.removingLastComponent().isEmpty ? FilePath(".") : file.removingLastComponent()
        if createDirectory {
            // mkdir -p, keeping the errno of the step that failed.
            var prefix = directory.isAbsolute ? FilePath("/") : FilePath("")
            for component in directory.components {
                prefix.append(component)
                if mkdir(prefix.string, 0o755) != 0, errno != EEXIST {
                    throw WriteError(path: path, step: "creating \(prefix)", errno: Errno(rawValue: errno))
                }
            }
        }
        let temporary = directory.appending(".\(file.lastComponent?.string ?? "file").tmp-\(getpid())")
        func fail(_ step: String, _ error: Error) -> WriteError {
            WriteError(path: path, step: step, errno: (error as? Errno) ?? .ioError)
        }
        do {
            let fd = try FileDescriptor.open(temporary, .writeOnly, options: [.create, .truncate, .closeOnExec],
                                             permissions: [.ownerReadWrite, .groupRead, .otherRead])
            do {
                _ = try fd.writeAll(bytes)
                guard fsync(fd.rawValue) == 0 else { throw Errno(rawValue: errno) }
            } catch {
                try? fd.close()
                _ = unlink(temporary.string)
                throw error
            }
            try fd.close()
        } catch {
            throw fail("writing \(temporary)", error)
        }
        guard rename(temporary.string, file.string) == 0 else {
            let e = Errno(rawValue: errno)
            _ = unlink(temporary.string)
            throw WriteError(path: path, step: "rename", errno: e)
        }
        // Make the rename itself durable; a directory that cannot be opened or synced
        // (some filesystems) leaves the file saved, just less certainly.
        if let dir = try? FileDescriptor.open(directory, .readOnly, options: [.directory, .closeOnExec]) {
            _ = fsync(dir.rawValue)
            try? dir.close()
        }
    }
}

/// Where rig keeps state across runs (remembered poses, the last BLEControl board).
public enum StateDirectory {
    /// `$XDG_STATE_HOME/rig`, else `/var/lib/rig` when running as root (a service), else
    /// `~/.local/state/rig` (the XDG default). Nil when none applies.
    public static func `default`(environment: [String: String] = ProcessInfo.processInfo.environment,
                                 isRoot: Bool = geteuid() == 0) -> String? {
        if let state = environment["XDG_STATE_HOME"], state.hasPrefix("/") { return state + "/rig" }
        if isRoot { return "/var/lib/rig" }
        if let home = environment["HOME"], home.hasPrefix("/") { return home + "/.local/state/rig" }
        return nil
    }
}
