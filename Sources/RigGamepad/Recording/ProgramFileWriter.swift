import Glibc
import SystemPackage

/// Writes a file so that a crash or power cut leaves either the old or the new content,
/// never a torn mix: a temporary file in the same directory, written and `fsync`ed,
/// `rename`d over the target, then the directory `fsync`ed so the rename is durable.
public enum ProgramFileWriter {
    /// Why a save failed, with the path and the errno.
    public struct WriteError: Error, Sendable, CustomStringConvertible {
        public var path: String
        public var step: String
        public var errno: Errno
        public var description: String { "cannot save \(path): \(step) failed: \(errno)" }
    }

    /// - Parameter permissions: of the new file (the temporary file is created with them, so
    ///   a secret is never readable by others, not even for a moment).
    public static func write(_ text: String, to path: String,
                             permissions: FilePermissions = [.ownerReadWrite, .groupRead, .otherRead]) throws(WriteError) {
        let file = FilePath(path)
        let directory = file.removingLastComponent().isEmpty ? FilePath(".") : file.removingLastComponent()
        let temporary = directory.appending(".\(file.lastComponent?.string ?? "program").tmp-\(getpid())")
        func fail(_ step: String, _ error: Error) -> WriteError {
            WriteError(path: path, step: step, errno: (error as? Errno) ?? .ioError)
        }
        do {
            let fd = try FileDescriptor.open(temporary, .writeOnly, options: [.create, .truncate, .closeOnExec],
                                             permissions: permissions)
            do {
                _ = try fd.writeAll(Array(text.utf8))
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
