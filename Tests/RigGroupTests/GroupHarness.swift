import Foundation
import Glibc
import RigGroup
import RigRuntime
import RigTestSupport
import Synchronization

/// Debian's `mosquitto` on a free loopback port, with a config file in a temp dir: started
/// and restarted by its PID, waited for on its own "running" line (never a fixed sleep).
final class TestBroker: @unchecked Sendable {
    let port: Int
    let directory: URL
    private var child: ChildProcess?
    private(set) var log: PipeCollector?

    /// - Parameter users: with users, the broker takes only them (their passwords hashed
    /// into its password file by mosquitto_passwd); without, anyone.
    init(users: [String: String] = [:]) throws {
        directory = try TestTools.temporaryDirectory()
        port = try LoopbackTCP.freePort().get()
        var passwordFile: String?
        if !users.isEmpty {
            let passwords = directory.appendingPathComponent("passwd").path
            try "".write(toFile: passwords, atomically: true, encoding: .utf8)
            for (user, password) in users {
                // Under sh, as every process here (Foundation's wait starves on 2 cores).
                let made = try GroupRig(["-b", passwords, user, password], state: directory, executable: "/usr/bin/mosquitto_passwd")
                guard made.exitStatus(within: 120) == 0 else { throw BrokerMissing(detail: "mosquitto_passwd: \(made.transcript)") }
            }
            passwordFile = passwords
        }
        try LoopbackMosquitto.configuration(port: port, logEverything: true, passwordFile: passwordFile).write(
            to: directory.appendingPathComponent("mosquitto.conf"), atomically: true, encoding: .utf8)
        try start()
    }

    var url: String { "mqtt://127.0.0.1:\(port)" }

    /// Runs mosquitto as a `ChildProcess` (reaped by a thread of its own, never by
    /// Foundation's process monitor); waits on its own log lines, never a fixed sleep.
    func start() throws {
        guard let executable = LoopbackMosquitto.executable else { throw BrokerMissing() }
        let err = Pipe()
        let child = try ChildProcess(
            URL(fileURLWithPath: executable), ["-c", directory.appendingPathComponent("mosquitto.conf").path],
            environment: ProcessInfo.processInfo.environment, stderr: err.fileHandleForWriting.fileDescriptor)
        err.fileHandleForWriting.closeFile()
        let log = PipeCollector(err)
        self.log = log
        self.child = child
        // mosquitto says which port it listens on once the socket is bound.
        guard log.wait(for: LoopbackMosquitto.readyLine(port: port), within: 60), log.wait(for: "running", within: 60) else {
            child.killAndWait()
            throw BrokerMissing(detail: log.text)
        }
    }

    /// SIGKILL: the broker vanishes without a word (its retained messages with it).
    func kill() { end(SIGKILL) }

    func stop() { end(SIGTERM) }

    private func end(_ signal: Int32) {
        guard let child, child.isRunning else { return }
        Glibc.kill(child.processIdentifier, signal)
        if !child.wait(within: 60) { child.killAndWait() }
    }

    /// Publishes as any other MQTT 5 client would (libmosquitto, QoS 1), waiting until the
    /// broker has it: one connection per message, closed cleanly.
    func publish(_ topic: String, _ payload: String, retain: Bool = false, expirySeconds: UInt32? = nil) throws {
        let connected = DispatchSemaphore(value: 0)
        let client = try MQTTClient(
            clientID: "test-\(UUID().uuidString.prefix(8))", address: BrokerAddress(host: "127.0.0.1", port: port), credentials: BrokerCredentials(),
            will: nil
        ) { event in if event == .connected { connected.signal() } }
        try client.start()
        guard connected.wait(timeout: .now() + 60) == .success else { throw BrokerMissing(detail: "the test's client did not connect") }
        guard client.publish(topic, Array(payload.utf8), retain: retain, expirySeconds: expirySeconds) else {
            throw BrokerMissing(detail: "could not publish to \(topic)")
        }
        client.close()
    }

    struct BrokerMissing: Error, CustomStringConvertible {
        var detail = LoopbackMosquitto.missing
        var description: String { detail }
    }
}

/// One `rig` process of a group (a leader or a follower) on the simulated rig, with its
/// own state directory, its output read as it comes.
final class GroupRig: @unchecked Sendable {
    let out: PipeCollector
    let err: PipeCollector
    let pid: pid_t?

    /// - Parameters:
    ///   - executable: another program than `rig` (then run with `arguments` alone).
    ///   - realtimeFlag: `--no-realtime` appended (a `rig` command that runs the loop).
    ///   - prefix: a command that runs it (`ip netns exec NAME` for a rig on a host of its own).
    init(
        _ arguments: [String], state: URL, environment extra: [String: String] = [:], executable: String = RigProcess.executable.path,
        realtimeFlag: Bool = true, prefix: [String] = []
    ) throws {
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_STATE_HOME"] = state.path
        for (key, value) in extra { environment[key] = value }
        let (_, out, err) = try RigProcess.start(
            ["-c", supervised] + prefix + [executable] + arguments
                + (realtimeFlag && executable == RigProcess.executable.path ? ["--no-realtime"] : []),
            program: URL(fileURLWithPath: "/bin/sh"), environment: environment)
        self.out = PipeCollector(out)
        self.err = PipeCollector(err)
        pid = supervisedPID(self.err)
    }

    var exited: Bool { err.text.contains("supervised-exit=") }

    func kill9() {
        // Only while it runs: once `sh` has reaped it, its PID may be another process's.
        guard let pid, !exited else { return }
        Glibc.kill(pid, SIGKILL)
        _ = err.wait(for: "supervised-exit=", within: 60)
    }

    /// Waits for the exit (generous: a loaded machine), killing it past the deadline.
    func exitStatus(within seconds: Double = 240) -> Int32? {
        guard err.wait(for: "supervised-exit=", within: seconds) else {
            kill9()
            return nil
        }
        // The marker comes on stderr from `sh` once the process ended; what it wrote to
        // stdout may still be in the pipe: read both to their end before anyone looks.
        _ = out.waitForEnd(within: 30)
        _ = err.waitForEnd(within: 30)
        return err.text.components(separatedBy: "supervised-exit=").last.flatMap { Int32($0.prefix { $0.isNumber }) }
    }

    var transcript: String { "stdout:\n\(out.text)\nstderr:\n\(err.text)" }
}

/// A host of the test's own: a network namespace joined to this one by a veth pair, its
/// own address on it (`address`) and ours (`gateway`). A rig runs there through `prefix`;
/// it reaches this machine only at `gateway` (where the test puts the lossy link). Made and
/// removed by name; needs root and `ip netns` (CI runs as root).
final class TestHost: @unchecked Sendable {
    let name: String
    let gateway: String
    let address: String
    private static let counter = Mutex(0)

    /// Why hosts cannot be made here (nil when they can): tried once, with a probe namespace.
    static let unavailable: String? = {
        guard getuid() == 0 else { return "SKIPPED: network namespaces need root (CI runs as root): the follower behind a cut link was NOT tested" }
        let probe = "rig-probe-\(getpid())"
        let made = shell("ip netns add \(probe) && ip netns exec \(probe) true; status=$?; ip netns del \(probe) 2>/dev/null; exit $status")
        guard made.status == 0 else {
            return
                "SKIPPED: `ip netns` does not work here (\(made.output.trimmingCharacters(in: .whitespacesAndNewlines))): the follower behind a cut link was NOT tested"
        }
        return nil
    }()

    init() throws {
        let k = Self.counter.withLock { n -> Int in
            n += 1
            return n
        }
        let pid = Int(getpid())
        name = "rig-test-\(pid)-\(k)"
        // A /30 of 10.77.0.0/16 from the PID and the count: tests of other processes at the same time take other ones.
        let n = (pid * 8 + k) % 16384
        let last = (n % 64) * 4
        gateway = "10.77.\(n / 64).\(last + 1)"
        address = "10.77.\(n / 64).\(last + 2)"
        let outside = "rg\(pid % 1_000_000)o\(k)"
        let inside = "rg\(pid % 1_000_000)i\(k)"
        let made = Self.shell(
            """
            set -e
            ip netns add \(name)
            ip link add \(outside) type veth peer name \(inside)
            ip link set \(inside) netns \(name)
            ip addr add \(gateway)/30 dev \(outside)
            ip link set \(outside) up
            ip netns exec \(name) ip addr add \(address)/30 dev \(inside)
            ip netns exec \(name) ip link set \(inside) up
            ip netns exec \(name) ip link set lo up
            """)
        guard made.status == 0 else {
            remove()
            throw HostFailure(description: "could not make the test host \(name): \(made.output)")
        }
    }

    /// Runs a command there.
    var prefix: [String] { ["/usr/sbin/ip", "netns", "exec", name] }

    /// Removes the namespace (and the veth pair with it).
    func remove() { _ = Self.shell("ip netns del \(name) 2>/dev/null") }

    struct HostFailure: Error, CustomStringConvertible { var description: String }

    /// Runs `script` with `sh` to its end (waiting on its last line, not on Foundation's
    /// process wait): its exit status and what it wrote.
    static func shell(_ script: String) -> (status: Int32?, output: String) {
        guard let (_, out, err) = try? RigProcess.start(["-c", "(\n\(script)\n) 2>&1; echo \"shell-exit=$?\" >&2"], program: URL(fileURLWithPath: "/bin/sh"))
        else { return (nil, "sh did not start") }
        let output = PipeCollector(out)
        let status = PipeCollector(err)
        guard status.wait(for: "shell-exit=", within: 60) else { return (nil, output.text) }
        _ = output.waitForEnd(within: 10)
        return (status.text.components(separatedBy: "shell-exit=").last.flatMap { Int32($0.prefix { $0.isNumber }) }, output.text)
    }
}

/// `Benchmarks/python/lossy_link.py` (the link `rig bench group --link lossy` uses) in front
/// of the broker: every chunk 20 ± 5 ms late, 1 % held back 200 ms, and a cut on request.
/// Commands go to its stdin; the test waits for its answers.
final class TestLossyLink: @unchecked Sendable {
    let port: Int
    let host: String
    private let process: TestProcess
    private let input: Pipe
    let out: PipeCollector

    init(listen host: String, target port: Int) throws {
        let (python, prefix) = TestTools.executable("python3")
        let script = TestTools.packageRoot.appendingPathComponent("Benchmarks/python/lossy_link.py").path
        process = TestProcess()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = prefix + [script, "--listen", "\(host):0", "--target", "127.0.0.1:\(port)", "--seed", "1"]
        input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = output
        try process.run()
        out = PipeCollector(output)
        guard out.wait(for: "\n", within: 60), let line = out.text.split(separator: "\n").first, line.hasPrefix("listening "),
            let listening = line.split(separator: ":").last.flatMap({ Int($0) })
        else {
            process.terminate()
            throw LinkFailure(description: "lossy_link.py did not listen: \(out.text)")
        }
        self.host = host
        self.port = listening
    }

    var url: String { "mqtt://\(host):\(self.port)" }

    /// Sends `command` (cut, drop, heal) and waits until the link says it is done.
    @discardableResult
    func send(_ command: String) -> Bool {
        input.fileHandleForWriting.write(Data("\(command)\n".utf8))
        return out.wait(for: "ok \(command)", within: 60)
    }

    /// The end of its input: it closes every connection and exits.
    func stop() {
        try? input.fileHandleForWriting.close()
        _ = out.waitForEnd(within: 30)
    }

    struct LinkFailure: Error, CustomStringConvertible { var description: String }
}

/// `sh -c supervised PROGRAM ARGS…`: an inner shell says its PID (`supervised-pid=N`) and
/// becomes the program (`exec`, same PID); the outer one waits for it in the foreground
/// and says its exit status as a shell gives it (`supervised-exit=N`, 128 + the signal for
/// a kill) on stderr. (Not `&` and `wait`: the test process's children inherit a blocked
/// SIGCHLD, and `wait` never wakes then.)
let supervised = #"sh -c 'echo "supervised-pid=$$" >&2; exec "$0" "$@"' "$0" "$@"; echo "supervised-exit=$?" >&2"#

func supervisedPID(_ err: PipeCollector) -> pid_t? {
    guard err.wait(for: "supervised-pid=", within: 60) else { return nil }
    return err.text.components(separatedBy: "supervised-pid=").dropFirst().first.flatMap { pid_t($0.prefix { $0.isNumber }) }
}

/// A stepped program on a simulated pan/tilt rig, written into `directory`.
/// - Parameters:
///   - camera: the rig's `"camera"` section (JSON), if any.
///   - extra: more members of the program (`"trigger": "interval:2"`), JSON.
func writeGroupProgram(in directory: URL, rigName: String, steps: Int, camera: String? = nil, extra: String? = nil) throws -> String {
    let rig = """
        {"name": "\(rigName)", "loopRateHz": 100, "output": {"type": "sim"}, \(camera.map { "\"camera\": \($0), " } ?? "")"axes": [
          {"name": "pan", "channel": 0, "pulseUs": [500, 2500], "angleDeg": [-90, 90], "home": 0, "park": 0,
           "softLimits": [-85, 85], "maxVelocity": 90, "maxAcceleration": 180, "idle": "hold"}]}
        """
    try rig.write(to: directory.appendingPathComponent("\(rigName).json"), atomically: true, encoding: .utf8)
    let poses = (0..<steps).map { #"{"pose": {"pan": \#(($0 + 1) * 2)}, "settleSeconds": 0.1}"# }.joined(separator: ", ")
    let program = #"{"rig": "\#(rigName).json", "kind": "steps", \#(extra.map { $0 + ", " } ?? "")"steps": [\#(poses)]}"#
    let path = directory.appendingPathComponent("\(rigName)-program.json").path
    try program.write(toFile: path, atomically: true, encoding: .utf8)
    return path
}

/// The `shot` events of a shot log: (rig or nil for the log's own, 1-based step, edge in UTC ns).
func groupFrames(_ path: String) throws -> [(rig: String?, step: Int, edgeNs: Int64?)] {
    let text = try String(contentsOfFile: path, encoding: .utf8)
    return text.split(separator: "\n").compactMap { line in
        guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], object["event"] as? String == "shot",
            let step = object["step"] as? Int
        else { return nil }
        return (object["rig"] as? String, step, (object["edgeNs"] as? NSNumber)?.int64Value)
    }
}
