import Dispatch
import FoundationEssentials
import Glibc
import RigRuntime
import RigSyscall
import SystemPackage

/// A process a benchmark starts and keeps running beside itself (`rig serve`, a broker, the
/// rigs of a group, a link proxy), signalled by its PID and reaped by the benchmark:
/// posix_spawn with stdin on /dev/null (or a pipe the benchmark writes to, `input`) and
/// stdout and stderr together where `output` says. (A child run to its end goes through
/// `childRun`/`childOutput`.)
final class BenchChild {
    enum Output {
        case null
        /// Created or truncated.
        case file(String)
        /// A pipe: its read end is `pipe` (the benchmark must keep reading it).
        case pipe
    }

    let pid: pid_t
    let executable: String
    /// The read end, for `.pipe`.
    let pipe: FileDescriptor?
    /// The write end of its stdin, with `input` (closing it is the child's end of input).
    let input: FileDescriptor?
    private(set) var waitStatus: Int32?
    private(set) var usage = rusage()

    init(_ executable: String, _ arguments: [String], environment: [String: String]? = nil, output: Output, input: Bool = false) throws(BenchError) {
        self.executable = executable
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var inputEnds: (readEnd: FileDescriptor, writeEnd: FileDescriptor)?
        if input {
            do { inputEnds = try Self.pipe() } catch { throw BenchError("cannot make a pipe for \(executable): \(error)") }
        }
        if let ends = inputEnds {
            posix_spawn_file_actions_adddup2(&actions, ends.readEnd.rawValue, 0)
            posix_spawn_file_actions_addclose(&actions, ends.writeEnd.rawValue)
        } else {
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        }
        defer { try? inputEnds?.readEnd.close() }
        var pipeEnds: (readEnd: FileDescriptor, writeEnd: FileDescriptor)?
        switch output {
        case .null:
            posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
            posix_spawn_file_actions_adddup2(&actions, 1, 2)
        case .file(let path):
            posix_spawn_file_actions_addopen(&actions, 1, path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            posix_spawn_file_actions_adddup2(&actions, 1, 2)
        case .pipe:
            do { pipeEnds = try Self.pipe() } catch { throw BenchError("cannot make a pipe for \(executable): \(error)") }
            if let ends = pipeEnds {
                posix_spawn_file_actions_adddup2(&actions, ends.writeEnd.rawValue, 1)
                posix_spawn_file_actions_adddup2(&actions, ends.writeEnd.rawValue, 2)
                posix_spawn_file_actions_addclose(&actions, ends.readEnd.rawValue)
            }
        }
        defer { try? pipeEnds?.writeEnd.close() }
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = (environment ?? ProcessInfo.processInfo.environment).map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for p in argv + envp { free(p) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, executable, &actions, nil, argv, envp)
        guard spawned == 0 else {
            try? pipeEnds?.readEnd.close()
            try? inputEnds?.writeEnd.close()
            throw BenchError("cannot start \(executable): \(String(cString: strerror(spawned)))")
        }
        self.pid = pid
        pipe = pipeEnds?.readEnd
        self.input = inputEnds?.writeEnd
    }

    /// A pipe whose ends are closed on exec: no other child inherits them (a child that held
    /// the write end of another's stdin would keep that one from ever seeing its end).
    private static func pipe() throws -> (readEnd: FileDescriptor, writeEnd: FileDescriptor) {
        let ends = try FileDescriptor.pipe()
        for fd in [ends.readEnd, ends.writeEnd] { _ = fcntl(fd.rawValue, F_SETFD, FD_CLOEXEC) }
        return ends
    }

    /// Sends `signal`, only while the child has not been reaped (its PID is still its own).
    func signal(_ signal: Int32) {
        guard waitStatus == nil else { return }
        kill(pid, signal)
    }

    /// Reaps the child if it has ended (without waiting); true once it has.
    @discardableResult
    func poll() -> Bool {
        if waitStatus != nil { return true }
        var status: Int32 = 0
        let reaped = Syscall.call { wait4(pid, &status, WNOHANG, &usage) }
        if case .success(let p) = reaped, p == pid { waitStatus = status }
        return waitStatus != nil
    }

    /// Waits for the end and reaps the child; its wait status.
    @discardableResult
    func wait() -> Int32 {
        if let waitStatus { return waitStatus }
        var status: Int32 = 0
        _ = Syscall.call { wait4(pid, &status, 0, &usage) }
        waitStatus = status
        return status
    }

    /// Ends it with `signal` (then SIGKILL past `seconds`) and reaps it.
    func stop(_ signal: Int32 = SIGTERM, within seconds: Double = 10) {
        guard !poll() else { return }
        kill(pid, signal)
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(seconds * 1e9)
        while !poll() {
            if DispatchTime.now().uptimeNanoseconds > deadline {
                kill(pid, SIGKILL)
                wait()
                return
            }
            SystemThread.sleep(seconds: 0.02)
        }
    }

    /// Exited normally with status 0 (WIFEXITED and WEXITSTATUS are macros Swift cannot
    /// import: exited when the low 7 bits are 0, the status in the next 8).
    var exitedCleanly: Bool { waitStatus.map { $0 & 0x7f == 0 && ($0 >> 8) & 0xff == 0 } ?? false }

    /// How it ended, for a person: "exit status N", "signal N", or "running".
    var ending: String {
        guard let status = waitStatus else { return "running" }
        return status & 0x7f == 0 ? "exit status \((status >> 8) & 0xff)" : "signal \(status & 0x7f)"
    }

    /// The child's user + system CPU seconds so far (/proc/PID/stat), 0 once it is reaped.
    var cpuSeconds: Double { Self.cpuSeconds(pid: pid) }

    /// A process's user + system CPU seconds so far (/proc/PID/stat fields 14 and 15).
    static func cpuSeconds(pid: pid_t) -> Double { cpuSeconds(stat: "/proc/\(pid)/stat") }

    /// The user + system CPU seconds so far of a process's threads whose name (as
    /// `/proc/PID/task/TID/comm` gives it, at most 15 bytes) begins with `prefix`. A thread
    /// that ended is not counted.
    static func threadCPUSeconds(pid: pid_t, named prefix: String) -> Double {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return tasks.reduce(0) { sum, tid in
            let comm = (try? String(contentsOfFile: "/proc/\(pid)/task/\(tid)/comm", encoding: .utf8))?.trimmed() ?? ""
            guard !comm.isEmpty, comm.hasPrefix(String(prefix.prefix(15))) else { return sum }
            return sum + cpuSeconds(stat: "/proc/\(pid)/task/\(tid)/stat")
        }
    }

    private static func cpuSeconds(stat path: String) -> Double {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8),
            let close = text.lastIndex(of: ")")
        else { return 0 }
        let fields = text[text.index(after: close)...].split(separator: " ")
        // After the name: state is field 3, so utime (14) and stime (15) are at 11 and 12.
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }
}
