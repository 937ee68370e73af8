import FoundationEssentials
import Glibc
import RigCore
import RigFormat
import RigSyscall

/// The one hardened reader of rig and program files, for every command and for `rig
/// serve`'s program library: regular files only (a FIFO, a device or a directory is
/// named as such, never waited on or read forever), at most `maxFileBytes`, UTF-8
/// checked, every problem a `FILE:1:1` error.
public enum RigFileReader {
    /// Rig and program files are small, but a generated keyframe program can be long (one
    /// with 1,000,000 keyframes is 55 MB, and `rig check` must take it); anything bigger is
    /// not one, and must not be read into memory whole.
    public static let maxFileBytes = 64 << 20

    /// The file as text (see `readBytes`).
    public static func readText(_ path: String) throws(FileError) -> String {
        String(decoding: try readBytes(path), as: UTF8.self)
    }

    /// A rig or program file's bytes, checked to be UTF-8 (an error names the first bad
    /// byte's line and column), for the JSON parser to read without a String copy.
    public static func readBytes(_ path: String) throws(FileError) -> [UInt8] {
        func fail(_ message: String) -> FileError {
            FileError(file: path, location: SourceLocation(line: 1, column: 1), path: "$", message: message)
        }
        // A NUL ends the path for open(2): the file opened would not be the one named.
        guard !path.utf8.contains(0) else { throw fail("the path contains a NUL byte; no file was opened") }
        guard !path.isEmpty else { throw fail("the path is empty") }
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
            let read = chunk.withUnsafeMutableBytes { buffer in Syscall.call { Glibc.read(fd, buffer.baseAddress, buffer.count) } }
            let n: Int
            switch read {
            case .success(let count): n = count
            case .failure(let error): throw fail("cannot read the file: \(String(cString: strerror(error.rawValue)))")
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

}
