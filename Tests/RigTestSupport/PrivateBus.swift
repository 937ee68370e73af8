import Foundation

/// A private `dbus-daemon` for one test (tier 2 of TESTING.md): started with
/// `dbus-daemon --session --print-address --nofork`, killed by ``stop()`` or on deinit.
///
/// Shared by the test targets through RigTestSupport; pass
/// ``address`` to `DBusConnection(bus: .address(…))`, or as `DBUS_SYSTEM_BUS_ADDRESS` in
/// ``environment`` to a child process (bluezoo, bleak, the `rig` binary).
public final class PrivateBus: @unchecked Sendable {
    /// The bus address printed by the daemon, such as `unix:path=/tmp/dbus-XXXX,guid=…`.
    public let address: String
    private let process: ChildProcess
    private let lock = NSLock()
    private var children: [ChildProcess] = []

    public struct StartError: Error, CustomStringConvertible {
        public var description: String
    }

    public init() throws {
        let output = Pipe()
        // Not a Foundation `Process`: see `ChildProcess`.
        let process = try ChildProcess(
            try Self.executable(named: "dbus-daemon"), ["--session", "--print-address", "--nofork"],
            environment: ProcessInfo.processInfo.environment, stdout: output.fileHandleForWriting.fileDescriptor)
        output.fileHandleForWriting.closeFile()
        // The daemon prints its address as one line once it listens.
        var data = Data()
        while !data.contains(UInt8(ascii: "\n")) {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }  // EOF: the daemon exited
            data.append(chunk)
        }
        let line = String(decoding: data, as: UTF8.self).split(separator: "\n").first.map(String.init) ?? ""
        guard !line.isEmpty else {
            process.killAndWait()
            throw StartError(description: "dbus-daemon printed no address")
        }
        self.process = process
        self.address = line
    }

    deinit {
        stop()
    }

    /// The current environment with this bus as both the system and the session bus.
    public var environment: [String: String] {
        var env = ProcessInfo.processInfo.environment
        env["DBUS_SYSTEM_BUS_ADDRESS"] = address
        env["DBUS_SESSION_BUS_ADDRESS"] = address
        return env
    }

    /// Starts `command` (looked up in `PATH`) with ``environment``, its output dropped; it
    /// is killed by ``stop()``. A `ChildProcess`, not a Foundation `Process` (see there).
    @discardableResult
    public func launch(_ command: String, _ arguments: [String]) throws -> ChildProcess {
        let child = try ChildProcess(try Self.executable(named: command), arguments, environment: environment)
        lock.withLock { children.append(child) }
        return child
    }

    /// Kills every launched child (not the daemon) and reaps them: a test can restart a
    /// service on the same bus.
    public func stopChildren() {
        let all = lock.withLock { () -> [ChildProcess] in
            let all = children
            children = []
            return all
        }
        for child in all { child.killAndWait() }
    }

    /// Kills every launched child, then the daemon, and reaps them (dbus-daemon ignores
    /// SIGTERM; nothing here needs a graceful exit).
    public func stop() {
        stopChildren()
        process.killAndWait()
    }

    /// `name` from the test virtualenv (`scripts/setup --test`), else from `PATH`.
    public static func executable(named name: String) throws -> URL {
        let venv = TestTools.venv.appendingPathComponent("bin").appendingPathComponent(name)
        if FileManager.default.isExecutableFile(atPath: venv.path) { return venv }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for directory in path.split(separator: ":") {
            let candidate = URL(fileURLWithPath: String(directory)).appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        throw StartError(description: "\(name) not found in .build-venv/bin or PATH: \(TestTools.setupHint)")
    }
}
