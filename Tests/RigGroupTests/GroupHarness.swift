import Foundation
import Glibc
import RigGroup
import RigTestSupport

/// Debian's `mosquitto` on a free loopback port, with a config file in a temp dir: started
/// and restarted by its PID, waited for on its own "running" line (never a fixed sleep).
final class TestBroker: @unchecked Sendable {
    let port: Int
    let directory: URL
    private var pid: pid_t?
    private(set) var log: PipeCollector?

    /// - Parameter users: with users, the broker takes only them (their passwords hashed
    /// into its password file by mosquitto_passwd); without, anyone.
    init(users: [String: String] = [:]) throws {
        directory = try TestTools.temporaryDirectory()
        port = try Self.freePort()
        var access = "allow_anonymous true"
        if !users.isEmpty {
            let passwords = directory.appendingPathComponent("passwd").path
            try "".write(toFile: passwords, atomically: true, encoding: .utf8)
            for (user, password) in users {
                // Under sh, as every process here (Foundation's wait starves on 2 cores).
                let made = try GroupRig(["-b", passwords, user, password], state: directory, executable: "/usr/bin/mosquitto_passwd")
                guard made.exitStatus(within: 120) == 0 else { throw BrokerMissing(detail: "mosquitto_passwd: \(made.transcript)") }
            }
            access = "allow_anonymous false\npassword_file \(passwords)"
        }
        let config = """
            listener \(port) 127.0.0.1
            \(access)
            persistence false
            log_dest stderr
            log_type all
            """
        try config.write(to: directory.appendingPathComponent("mosquitto.conf"), atomically: true, encoding: .utf8)
        try start()
    }

    var url: String { "mqtt://127.0.0.1:\(port)" }

    static var executable: String? {
        ["/usr/sbin/mosquitto", "/usr/bin/mosquitto"].first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Runs mosquitto under `sh`, which says its PID and, once it is gone, its exit: the test
    /// waits on those lines, never on Foundation's process wait (which needs a GCD thread
    /// that a test blocking on two cores may not leave it).
    func start() throws {
        guard let executable = Self.executable else { throw BrokerMissing() }
        let (_, _, err) = try RigProcess.start(
            ["-c", supervised, executable, "-c", directory.appendingPathComponent("mosquitto.conf").path], program: URL(fileURLWithPath: "/bin/sh"))
        let log = PipeCollector(err)
        self.log = log
        // mosquitto says which port it listens on once the socket is bound.
        guard log.wait(for: "Opening ipv4 listen socket on port \(port)", within: 60), log.wait(for: "running", within: 60),
            let pid = supervisedPID(log)
        else { throw BrokerMissing(detail: log.text) }
        self.pid = pid
    }

    /// SIGKILL: the broker vanishes without a word (its retained messages with it).
    func kill() { end(SIGKILL) }

    func stop() { end(SIGTERM) }

    private func end(_ signal: Int32) {
        guard let log, let pid, !log.text.contains("supervised-exit=") else { return }
        Glibc.kill(pid, signal)
        _ = log.wait(for: "supervised-exit=", within: 60)
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

    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else { throw BrokerMissing(detail: "no free port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    struct BrokerMissing: Error, CustomStringConvertible {
        var detail = "mosquitto is not installed: run `scripts/setup --test`"
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
    init(
        _ arguments: [String], state: URL, environment extra: [String: String] = [:], executable: String = RigProcess.executable.path,
        realtimeFlag: Bool = true
    ) throws {
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_STATE_HOME"] = state.path
        for (key, value) in extra { environment[key] = value }
        let (_, out, err) = try RigProcess.start(
            ["-c", supervised, executable] + arguments + (realtimeFlag && executable == RigProcess.executable.path ? ["--no-realtime"] : []),
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
        return err.text.components(separatedBy: "supervised-exit=").last.flatMap { Int32($0.prefix { $0.isNumber }) }
    }

    var transcript: String { "stdout:\n\(out.text)\nstderr:\n\(err.text)" }
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
