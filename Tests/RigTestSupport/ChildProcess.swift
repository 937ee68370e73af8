import Foundation

/// A long-lived helper process of a test (dbus-daemon, bluezoo, a Python test board),
/// spawned with `posix_spawn` and reaped by a thread of its own, not by Foundation's
/// `Process`.
///
/// Foundation's `Process` on Linux reaps every child on one shared thread, with a
/// blocking `waitpid` when the child's end of a socket pair reads as closed. In full runs on
/// 2 cores that thread was found blocked in `waitpid` on a bluezoo that was still running
/// (a spurious wake-up): no `Process` of the whole test run was seen to exit after that,
/// and the BLE suites hung until their time limits. A daemon that runs for a whole test is
/// therefore never a `Process`. The names match `Process`'s, so callers read the same.
public final class ChildProcess: @unchecked Sendable {
    public let processIdentifier: pid_t
    private let condition = NSCondition()
    private var status: Int32?

    public struct SpawnError: Error, CustomStringConvertible {
        public var description: String
    }

    /// Starts `executable` with `arguments` and `environment`; stdin is /dev/null, stdout
    /// and stderr go to `stdout` and `stderr` (file descriptors of ours, such as a pipe's
    /// writing end) or /dev/null. No other descriptor of ours is inherited.
    public init(
        _ executable: URL, _ arguments: [String], environment: [String: String], stdin: Int32? = nil, stdout: Int32? = nil,
        stderr: Int32? = nil, directory: URL? = nil
    ) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if let stdin {
            posix_spawn_file_actions_adddup2(&actions, stdin, 0)
        } else {
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        }
        if let stdout {
            posix_spawn_file_actions_adddup2(&actions, stdout, 1)
        } else {
            posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        }
        if let stderr {
            posix_spawn_file_actions_adddup2(&actions, stderr, 2)
        } else {
            posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        }
        Self.addCloseFrom(&actions, 3)
        if let directory { Self.addChdir(&actions, directory.path) }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // Its own process group, as Foundation's Process does: a terminal's Ctrl-C is ours.
        // No signal blocked and every one at its default: the test process blocks some
        // (its sessions' signal threads), and a child inherits the mask (a SIGTERM to a
        // broker would wait for ever).
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attributes, &none)
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        let argv = ([executable.path] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in argv + envp { free(pointer) }
        }
        var pid = pid_t()
        let result = posix_spawn(&pid, executable.path, &actions, &attributes, argv, envp)
        guard result == 0 else { throw SpawnError(description: "\(executable.path): \(String(cString: strerror(result)))") }
        processIdentifier = pid
        let reaper = Thread { [self] in reap() }
        reaper.stackSize = 1 << 18
        reaper.start()
    }

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34+; not in Swift's Glibc
    /// module, which lacks `_GNU_SOURCE`): every descriptor from `lowest` up is closed in
    /// the child.
    private static func addCloseFrom(_ actions: inout posix_spawn_file_actions_t, _ lowest: Int32) {
        typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") else { return }
        _ = unsafeBitCast(symbol, to: AddCloseFrom.self)(&actions, lowest)
    }

    /// glibc's `posix_spawn_file_actions_addchdir_np` (2.29+), as `addCloseFrom`.
    private static func addChdir(_ actions: inout posix_spawn_file_actions_t, _ path: String) {
        typealias AddChdir = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addchdir_np") else { return }
        _ = path.withCString { unsafeBitCast(symbol, to: AddChdir.self)(&actions, $0) }
    }

    /// SIGINT, as Ctrl-C (and `Process.interrupt`).
    public func interrupt() { if isRunning { kill(processIdentifier, SIGINT) } }

    /// SIGTERM (as `Process.terminate`).
    public func terminate() { if isRunning { kill(processIdentifier, SIGTERM) } }

    private func reap() {
        var raw: Int32 = 0
        while waitpid(processIdentifier, &raw, 0) == -1 && errno == EINTR {}
        condition.withLock {
            status = raw
            condition.broadcast()
        }
    }

    public var isRunning: Bool { condition.withLock { status == nil } }

    /// The exit code, or the signal's number when a signal ended it (as `Process`).
    public var terminationStatus: Int32 {
        let raw = condition.withLock { status } ?? 0
        return raw & 0x7f == 0 ? (raw >> 8) & 0xff : raw & 0x7f
    }

    /// Whether it exited or a signal ended it (as `Process`).
    public var terminationReason: Process.TerminationReason {
        let raw = condition.withLock { status } ?? 0
        return raw & 0x7f == 0 ? .exit : .uncaughtSignal
    }

    public func waitUntilExit() {
        condition.withLock {
            while status == nil { condition.wait() }
        }
    }

    /// Waits up to `seconds` for the exit: whether it came.
    public func wait(within seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        return condition.withLock {
            while status == nil {
                if !condition.wait(until: deadline) { return status != nil }
            }
            return true
        }
    }

    /// SIGKILL and the reap (a test's helper needs no graceful exit).
    public func killAndWait() {
        if isRunning { kill(processIdentifier, SIGKILL) }
        waitUntilExit()
    }
}

/// Foundation `Process`'s shape over `ChildProcess`, for the tests' short-lived commands (a
/// `rig` run, a Python checker, exiftool): set the same properties, `run()`, then wait and
/// read the status as with `Process`.
///
/// No test runs a Foundation `Process`. Its reaper watches each child through a socket
/// pair and calls a blocking `waitpid` on the one thread that reaps every child; in loaded
/// full runs that thread was found blocked on a child that still ran, after which no
/// process of the run was seen to exit. A `ChildProcess` is reaped by a thread of its own.
public final class TestProcess: @unchecked Sendable {
    public var executableURL: URL?
    public var arguments: [String] = []
    /// nil: this process's environment.
    public var environment: [String: String]?
    public var currentDirectoryURL: URL?
    /// A `Pipe`, a `FileHandle`, or nil for /dev/null (as `Process`'s, except that nil is
    /// /dev/null for stdout and stderr too: a test's output never mixes with the runner's).
    public var standardInput: Any?
    public var standardOutput: Any?
    public var standardError: Any?
    private var child: ChildProcess?

    public init() {}

    public func run() throws {
        guard let executableURL else { throw ChildProcess.SpawnError(description: "no executable") }
        func descriptor(_ stream: Any?, reading: Bool) -> Int32? {
            switch stream {
            case let pipe as Pipe: reading ? pipe.fileHandleForReading.fileDescriptor : pipe.fileHandleForWriting.fileDescriptor
            case let handle as FileHandle where handle !== FileHandle.nullDevice: handle.fileDescriptor
            default: nil
            }
        }
        child = try ChildProcess(
            executableURL, arguments, environment: environment ?? ProcessInfo.processInfo.environment,
            stdin: descriptor(standardInput, reading: true), stdout: descriptor(standardOutput, reading: false),
            stderr: descriptor(standardError, reading: false), directory: currentDirectoryURL)
        // The child's ends of the pipes are the child's alone now: their end of file comes
        // when it (and whatever it started) closes them. closeFile is idempotent, so a pipe
        // given as both stdout and stderr is closed once.
        (standardInput as? Pipe)?.fileHandleForReading.closeFile()
        (standardOutput as? Pipe)?.fileHandleForWriting.closeFile()
        (standardError as? Pipe)?.fileHandleForWriting.closeFile()
    }

    private var started: ChildProcess {
        guard let child else { preconditionFailure("TestProcess: run() first") }
        return child
    }

    public var processIdentifier: pid_t { started.processIdentifier }
    public var isRunning: Bool { child?.isRunning ?? false }
    public var terminationStatus: Int32 { started.terminationStatus }
    public var terminationReason: Process.TerminationReason { started.terminationReason }
    public func waitUntilExit() { started.waitUntilExit() }
    public func wait(within seconds: Double) -> Bool { started.wait(within: seconds) }
    public func interrupt() { started.interrupt() }
    public func terminate() { started.terminate() }
    public func killAndWait() { started.killAndWait() }
}
