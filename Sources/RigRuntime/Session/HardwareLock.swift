import FoundationEssentials
import Glibc
import RigFormat
import RigSyscall
import SystemPackage

/// Another process drives the same hardware.
public struct HardwareLockError: Error, Sendable, CustomStringConvertible {
    public var resource: String
    public var lockPath: String
    /// The holder's PID and command line, as it wrote them into the lock file (nil if unreadable).
    public var holderPID: Int32?
    public var holderCommand: String?
    /// Set when the lock file itself could not be opened.
    public var problem: String?

    public var description: String {
        if let problem { return "cannot lock \(resource) (\(lockPath)): \(problem)" }
        let who = holderPID.map { "process \($0)" + (holderCommand.map { " (\($0))" } ?? "") } ?? "another process"
        return "\(resource) is in use by \(who); stop it first (lock: \(lockPath))"
    }
}

/// Exclusive locks on hardware, one `flock` per resource on a lock file in
/// `HardwareLock.directory()`. The kernel drops a lock when its holder exits, however it
/// exits (SIGKILL included), so a stale lock file never blocks anyone; the file holds the
/// holder's PID and command line for the message a second process gets.
public final class HardwareLock: @unchecked Sendable {
    private var descriptors: [Int32]

    private init(descriptors: [Int32]) { self.descriptors = descriptors }

    /// The one lock directory every user's rig shares, a service's included: the package's
    /// tmpfiles.d/rig.conf makes it at boot (root, mode 1777, like /run/lock itself).
    public static let sharedDirectory = "/run/lock/rig"

    /// Where lock files live: `$RIG_LOCK_DIR`, else `/run/lock/rig` when it exists or can be
    /// made (every user and the units share it, so a service and a hand-started run see each
    /// other's locks), else `$XDG_RUNTIME_DIR/rig`, else `/tmp/rig-lock-<uid>` (a machine
    /// without a shared /run/lock: such runs see only their own user's locks).
    public static func directory(
        environment: [String: String] = ProcessInfo.processInfo.environment, shared: String = HardwareLock.sharedDirectory
    ) -> String {
        if let dir = environment["RIG_LOCK_DIR"], !dir.isEmpty { return dir }
        var status = stat()
        if stat(shared, &status) == 0, status.st_mode & S_IFMT == S_IFDIR { return shared }
        let parent = FilePath(shared).removingLastComponent().string
        if access(parent, W_OK) == 0 { return shared }
        if let runtime = environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") { return runtime + "/rig" }
        return "/tmp/rig-lock-\(getuid())"
    }

    /// Makes `directory` if it is missing. One made under a world-writable sticky parent (as
    /// /run/lock is) gets that parent's mode, 1777, whatever the umask: every user may create
    /// lock files there and none may remove another's. Returns errno, or 0.
    @discardableResult
    public static func prepareDirectory(_ directory: String) -> Int32 {
        guard mkdir(directory, 0o700) == 0 else { return errno == EEXIST ? 0 : errno }
        var parent = stat()
        let sharedParent = stat(FilePath(directory).removingLastComponent().string, &parent) == 0 && parent.st_mode & 0o1002 == 0o1002
        if sharedParent { _ = chmod(directory, 0o1777) }
        return 0
    }

    /// Opens (creating if need be) a lock file so that any user can open it later: created
    /// 0666 whatever the umask (the units run with 0077), opened without O_CREAT when it
    /// exists (fs.protected_regular refuses O_CREAT on another user's file in a sticky
    /// directory), and read-only when it is another user's file that an older rig made
    /// without write permission (flock needs no write access; only the holder's note is lost).
    static func openLockFile(_ path: String) -> Int32 {
        for _ in 0..<8 {
            let fd = open(path, O_RDWR | O_CLOEXEC)
            if fd >= 0 { return fd }
            if errno == EACCES {
                let readOnly = open(path, O_RDONLY | O_CLOEXEC)
                if readOnly >= 0 { return readOnly }
                errno = EACCES
                return -1
            }
            guard errno == ENOENT else { return -1 }
            let created = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o666)
            if created >= 0 {
                _ = fchmod(created, 0o666)
                return created
            }
            guard errno == EEXIST else { return -1 }  // another process made it first: open theirs
        }
        return -1
    }

    /// Takes every lock in `resources`, or none: throws naming the first that is held.
    public static func acquire(_ resources: [String], directory: String = HardwareLock.directory()) throws(HardwareLockError) -> HardwareLock {
        guard !resources.isEmpty else { return HardwareLock(descriptors: []) }
        prepareDirectory(directory)
        var taken: [Int32] = []
        for resource in resources {
            let path = directory + "/" + fileName(resource)
            let fd = openLockFile(path)
            guard fd >= 0 else {
                let code = errno
                var problem = String(cString: strerror(code))
                if code == EACCES || code == EROFS {
                    problem +=
                        ": this user cannot create lock files in \(directory); every user that runs rig must be able to (sudo chmod 1777 \(directory); the package's tmpfiles.d/rig.conf makes \(sharedDirectory) so at boot)"
                }
                for fd in taken { close(fd) }
                throw HardwareLockError(resource: resource, lockPath: path, problem: problem)
            }
            if case .failure(let error) = Syscall.call({ flock(fd, LOCK_EX | LOCK_NB) }) {
                let wouldBlock = error == .wouldBlock
                let problem = wouldBlock ? nil : String(cString: strerror(error.rawValue))
                let holder = wouldBlock ? readHolder(fd) : (nil, nil)
                close(fd)
                for fd in taken { close(fd) }
                throw HardwareLockError(resource: resource, lockPath: path, holderPID: holder.0, holderCommand: holder.1, problem: problem)
            }
            let me = "\(getpid())\n\(commandLine())\n"
            _ = ftruncate(fd, 0)
            _ = me.withCString { pwrite(fd, $0, strlen($0), 0) }
            taken.append(fd)
        }
        return HardwareLock(descriptors: taken)
    }

    /// Releases every lock (also done by the kernel when the process exits).
    public func release() {
        for fd in descriptors {
            _ = ftruncate(fd, 0)
            close(fd)
        }
        descriptors = []
    }

    deinit { release() }

    /// A device node's identity for a lock name, whatever spelling the rig file uses: the
    /// node a path or symlink resolves to (`/dev/i2c-rig` → `i2c-1`), a bare name looked up
    /// under `/dev`, a bare number as gpiolib numbers chips (`0` → `gpiochip0` with
    /// `numberedPrefix`). A node that does not exist (yet) keeps its spelling's last part.
    public static func deviceNode(_ spelling: String, numberedPrefix: String? = nil, devDirectory: String = "/dev") -> String {
        if let numberedPrefix, !spelling.isEmpty, spelling.allSatisfy(\.isASCII), spelling.allSatisfy(\.isNumber), let n = Int(spelling) {
            return numberedPrefix + String(n)
        }
        let path = spelling.contains("/") ? spelling : devDirectory + "/" + spelling
        if let real = realpath(path, nil) {
            defer { free(real) }
            let resolved = String(cString: real)
            if let name = resolved.split(separator: "/").last { return String(name) }
        }
        return spelling.split(separator: "/").last.map(String.init) ?? spelling
    }

    static func fileName(_ resource: String) -> String {
        String(resource.map { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "." || $0 == "_" ? $0 : "_" }) + ".lock"
    }

    private static func readHolder(_ fd: Int32) -> (Int32?, String?) {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let n = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        guard n > 0 else { return (nil, nil) }
        let lines = String(decoding: buffer[0..<n], as: UTF8.self).split(separator: "\n", maxSplits: 1)
        let pid = lines.first.flatMap { Int32($0) }
        let command = lines.count > 1 ? String(lines[1].prefix(200)).trimmed() : nil
        return (pid, command?.isEmpty == false ? command : nil)
    }

    private static func commandLine() -> String {
        CommandLine.arguments.joined(separator: " ").replacing("\n", with: " ")
    }
}
