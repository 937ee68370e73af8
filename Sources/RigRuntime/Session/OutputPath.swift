import CLinux
import FoundationEssentials
import Glibc
import SystemPackage

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
    /// anything but a regular file (those block or never end), lies on `/proc` or `/sys` or
    /// in a directory that does not exist or cannot be written, or is one of the run's `inputs`.
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
        // /proc and /sys hold regular-looking files whose writes reach the kernel.
        if let kind = kernelFilesystem(at: exists ? path : parentDirectory(path)) {
            throw fail("is on \(kind), a kernel filesystem that keeps no files; give a file on a disk")
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

    /// Checks a folder a run writes files into (the camera's `"download"`) before anything
    /// moves, and returns the bytes free there. The folder must be a directory on storage
    /// (not `/proc` or `/sys`) that this process can create files in: a missing one is made
    /// with its parents, as the run would, and a probe file is created, written and removed,
    /// so a read-only mount, a full disk or a file, FIFO or device in its place is refused
    /// now, not at the first frame.
    @discardableResult
    public static func checkFolder(_ path: String, option: String) throws(OutputPathError) -> UInt64 {
        func fail(_ problem: String) -> OutputPathError { OutputPathError(option: option, path: path, problem: problem) }
        guard !path.isEmpty else { throw fail("the path is empty") }
        var st = stat()
        if stat(path, &st) == 0 {
            switch st.st_mode & S_IFMT {
            case S_IFDIR: break
            case S_IFREG: throw fail("is a file; give a folder for the downloads")
            case S_IFIFO: throw fail("is a FIFO; give a folder for the downloads")
            case S_IFCHR, S_IFBLK: throw fail("is a device (nothing written there is kept); give a folder for the downloads")
            default: throw fail("is not a folder (a socket?); give a folder for the downloads")
            }
        }
        // The nearest folder that exists says which filesystem the files would land on.
        var existing = path
        while stat(existing, &st) != 0, existing != "/", existing != "." { existing = parentDirectory(existing) }
        if let kind = kernelFilesystem(at: existing) {
            throw fail("is on \(kind), a kernel filesystem that keeps no files; give a folder on a disk")
        }
        if stat(path, &st) != 0 {
            var made = ""
            for component in path.split(separator: "/", omittingEmptySubsequences: true) {
                made += (made.isEmpty && !path.hasPrefix("/") ? "" : "/") + component
                if mkdir(made, 0o755) != 0, errno != EEXIST {
                    if errno == ENOTDIR { throw fail("cannot be made: \(parentDirectory(made)) is a file, not a folder") }
                    throw fail("cannot be made (\(made): \(String(cString: strerror(errno))))")
                }
            }
            guard stat(path, &st) == 0, st.st_mode & S_IFMT == S_IFDIR else { throw fail("cannot be made (a file is in its way)") }
        }
        let probe = path + "/.rig-probe-\(getpid())"
        let fd = open(probe, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw fail("cannot be written (\(String(cString: strerror(errno))))") }
        let byte: [UInt8] = [0x0A]
        let wrote = write(fd, byte, 1)
        let writeError = errno
        close(fd)
        unlink(probe)
        guard wrote == 1 else { throw fail("cannot be written (\(String(cString: strerror(writeError))))") }
        return freeBytes(near: path) ?? 0
    }

    /// The bytes free to an unprivileged writer on the filesystem `path` is on (or would
    /// be made on: its nearest folder that exists); nil when that cannot be read. Makes
    /// nothing.
    public static func freeBytes(near path: String) -> UInt64? {
        var st = stat()
        var existing = path.isEmpty ? "." : path
        while stat(existing, &st) != 0, existing != "/", existing != "." { existing = parentDirectory(existing) }
        var space = statvfs()
        guard statvfs(existing, &space) == 0 else { return nil }
        return UInt64(space.f_bavail) * UInt64(space.f_frsize)
    }

    /// A path in `folder` for a file called `name` that no file there has and `taken`
    /// refuses: `NAME`, else `STEM-2.EXT`, `STEM-3.EXT`… (a copy never replaces a frame).
    public static func unusedPath(for name: String, in folder: String, taken: (String) -> Bool = { _ in false }) -> String {
        let ext = FilePath(name).extension ?? ""
        let stem = FilePath(name).stem ?? name
        var candidate = name
        var n = 2
        while taken(candidate) || FileManager.default.fileExists(atPath: FilePath(folder).appending(candidate).string) {
            candidate = ext.isEmpty ? "\(stem)-\(n)" : "\(stem)-\(n).\(ext)"
            n += 1
        }
        return FilePath(folder).appending(candidate).string
    }

    /// The name of the kernel filesystem `path` is on, if it is on one (`statfs`).
    static func kernelFilesystem(at path: String) -> String? {
        let type = rig_filesystem_type(path)
        return type >= 0 ? kernelFilesystems[UInt(type)] : nil
    }

    /// Filesystems that look like folders but keep nothing (`statfs` magic numbers from
    /// linux/magic.h), by the name a user knows them by.
    static let kernelFilesystems: [UInt: String] = [
        0x9fa0: "/proc", 0x6265_6572: "/sys", 0x1cd1: "devpts", 0x27e0eb: "cgroup", 0x6367_7270: "cgroup2",
        0x6462_6720: "debugfs", 0x7363_6673: "securityfs", 0x7472_6163: "tracefs", 0xcafe_4a11: "bpffs",
        0x6165_676C: "pstore", 0xde5e_81e4: "efivarfs", 0x6265_6570: "configfs",
    ]

    static func parentDirectory(_ path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        let parent = String(path[..<slash])
        return parent.isEmpty ? "/" : parent
    }

    /// The real path of a file (absolute, symlinks resolved), or of its directory plus its
    /// name when it does not exist yet.
    public static func canonical(_ path: String) -> String {
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
