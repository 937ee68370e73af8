import Foundation
import RigTestSupport
import Testing

/// A rig's `"group"` section (broker, name, credentials file) as `rig follow`, `rig play
/// --group … --followers …` and `rig doctor` read it, against a real mosquitto that takes
/// only its users.
@Suite(.serialized) struct GroupRigFileTests {
    /// A rig file with a `"group"` section and, beside it, its credentials file.
    func rigFile(_ dir: URL, broker: TestBroker, name: String, password: String, mode: Int) throws -> String {
        let credentials = dir.appendingPathComponent("mqtt-\(name).json")
        try #"{"username": "\#(name)", "password": "\#(password)"}"#.write(to: credentials, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: credentials.path)
        let rig = """
            {"name": "\(name)", "loopRateHz": 100, "output": {"type": "sim"},
             "group": {"broker": "\(broker.url)", "name": "\(name)", "credentials": "mqtt-\(name).json"},
             "axes": [{"name": "pan", "channel": 0, "pulseUs": [500, 2500], "angleDeg": [-90, 90], "softLimits": [-85, 85],
                       "maxVelocity": 90, "maxAcceleration": 180}]}
            """
        let path = dir.appendingPathComponent("\(name).json").path
        try rig.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// `rig doctor` (or another command) run to its end under sh, as every process of
    /// these tests (Foundation's process wait starves on 2 cores): exit status and stdout.
    func run(_ arguments: [String]) throws -> (status: Int32?, stdout: String, stderr: String) {
        let dir = try TestTools.temporaryDirectory()
        let process = try GroupRig(
            arguments, state: dir.appendingPathComponent("state"), environment: ["RIG_LOCK_DIR": dir.appendingPathComponent("lock").path],
            realtimeFlag: false)
        let status = process.exitStatus()
        return (status, process.out.text, process.err.text)
    }

    func doctor(_ rig: String) throws -> (status: Int32?, stdout: String, stderr: String) {
        try run(["doctor", "--scan-seconds", "0", "--rig", rig])
    }

    @Test func doctorLogsInToTheBrokerWithTheRigFilesCredentials() async throws {
        // Off the cooperative pool: the waits on processes block for seconds.
        try await onThread {
            let broker = try TestBroker(users: ["f1": "right", "f2": "right"])
            defer { broker.stop() }
            let dir = try TestTools.temporaryDirectory()
            let good = try doctor(try rigFile(dir, broker: broker, name: "f1", password: "right", mode: 0o600))
            #expect(good.stdout.contains("ok       group credentials:"), "\(good.stdout)")
            #expect(good.stdout.contains("ok       group broker: mqtt://127.0.0.1:\(broker.port) answers"), "\(good.stdout)")
            #expect(good.stdout.contains("group clock:"), "\(good.stdout)")
            let wrong = try doctor(try rigFile(dir, broker: broker, name: "f2", password: "wrong", mode: 0o600))
            #expect(wrong.status == 1)
            #expect(wrong.stdout.contains("problem  group broker: mqtt://127.0.0.1:\(broker.port): refused: Not authorized"), "\(wrong.stdout)")
            #expect(!wrong.stdout.contains("answers (MQTT 5)"), "\(wrong.stdout)")
            // A credentials file others may read is a problem, named with its fix.
            let open = try doctor(try rigFile(dir, broker: broker, name: "f1", password: "right", mode: 0o644))
            #expect(open.status == 1)
            #expect(open.stdout.contains("problem  group credentials:") && open.stdout.contains("chmod 600"), "\(open.stdout)")
        }
    }

    @Test func aBadGroupSectionIsLocated() async throws {
        // Off the cooperative pool: the waits on processes block for seconds.
        try await onThread {
            let dir = try TestTools.temporaryDirectory()
            let path = dir.appendingPathComponent("rig.json").path
            try """
            {"name": "r", "output": {"type": "sim"},
             "group": {"broker": "mqtt://user:pw@10.0.0.2"},
             "axes": [{"name": "pan", "channel": 0}]}
            """.write(toFile: path, atomically: true, encoding: .utf8)
            let result = try run(["check", path])
            #expect(result.status == 2)
            #expect(result.stderr.contains("\(path):2:22: error:") && result.stderr.contains("credentials do not go in the address"), "\(result.stderr)")
        }
    }

    /// The follower and the leader find the broker, their names and their credentials in
    /// their rig files: no --broker, --lead, --name or --credentials.
    @Test func aGroupPlaysFromItsRigFilesAlone() async throws {
        // Off the cooperative pool: the waits on processes block for seconds.
        try await onThread {
            let broker = try TestBroker(users: ["lead": "a", "f1": "b"])
            defer { broker.stop() }
            let dir = try TestTools.temporaryDirectory()
            func program(_ name: String, password: String) throws -> String {
                _ = try rigFile(dir, broker: broker, name: name, password: password, mode: 0o600)
                let poses = (1...3).map { #"{"pose": {"pan": \#($0 * 2)}, "settleSeconds": 0.1}"# }.joined(separator: ", ")
                let path = dir.appendingPathComponent("\(name)-program.json").path
                try #"{"rig": "\#(name).json", "kind": "steps", "steps": [\#(poses)]}"#.write(toFile: path, atomically: true, encoding: .utf8)
                return path
            }
            let log = dir.appendingPathComponent("group.jsonl").path
            let f1 = try GroupRig(["follow", try program("f1", password: "b"), "--group", "g1"], state: dir.appendingPathComponent("state-f1"))
            let lead = try GroupRig(
                ["play", try program("lead", password: "a"), "--group", "g1", "--followers", "f1", "--lead-time", "0.5", "--log", log],
                state: dir.appendingPathComponent("state-lead"))
            defer {
                lead.kill9()
                f1.kill9()
            }
            #expect(lead.exitStatus() == 0, "\(lead.transcript)")
            #expect(f1.exitStatus() == 0, "\(f1.transcript)")
            let frames = try groupFrames(log)
            #expect(frames.filter { $0.rig == nil }.map(\.step) == [1, 2, 3], "\(lead.transcript)")
            #expect(frames.filter { $0.rig == "f1" }.map(\.step) == [1, 2, 3], "\(lead.transcript)")
        }
    }
}
