import FoundationEssentials
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

    public static func write(
        _ text: String, to path: String, createDirectory: Bool = false,
        permissions: FilePermissions = [.ownerReadWrite, .groupRead, .otherRead]
    ) throws(WriteError) {
        try write(Array(text.utf8), to: path, createDirectory: createDirectory, permissions: permissions)
    }

    /// - Parameters:
    ///   - createDirectory: create the file's directory (and its parents) first.
    ///   - permissions: of the new file; the temporary file is created with them, so a
    ///     secret (the `rig serve` token) is never readable by others, not even for a moment.
    public static func write(
        _ bytes: [UInt8], to path: String, createDirectory: Bool = false,
        permissions: FilePermissions = [.ownerReadWrite, .groupRead, .otherRead]
    ) throws(WriteError) {
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
            // A temporary left by a crash is removed first: `.create` would keep its mode.
            _ = unlink(temporary.string)
            let fd = try FileDescriptor.open(
                temporary, .writeOnly, options: [.create, .exclusiveCreate, .closeOnExec],
                permissions: permissions)
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
