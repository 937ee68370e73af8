import Foundation
import RigTestSupport
import Synchronization
import Testing

/// `rig doctor` with the real binary: the good and the broken case of the checks this
/// machine can stage without hardware (a program, the I2C bus, the state and lock
/// directories, a malformed rig). Bluetooth is checked against bluezoo in
/// RigBLEControlTests, the PCA9685 and GPIO against i2c-stub and gpio-sim in the HIL tier.
@Suite struct DoctorTests {
    /// Runs `rig doctor ARGS` with `environment` added.
    func doctor(_ arguments: [String], environment: [String: String] = [:]) throws -> RigProcess.Result {
        let env = environment.map { "\($0.key)=\($0.value)" }
        return try RigProcess.run(
            env + [RigProcess.executable.path, "doctor", "--scan-seconds", "0"] + arguments, program: URL(fileURLWithPath: "/usr/bin/env"))
    }

    func writable() throws -> [String: String] {
        let dir = try TestTools.temporaryDirectory().path
        return ["XDG_STATE_HOME": dir + "/state", "RIG_LOCK_DIR": dir + "/lock"]
    }

    @Test(.blocking) func theSimulatedRigAndAFeasibleProgramAreReady() throws {
        let result = try doctor(["--rig", "rigs/pantilt.json", "--program", "rigs/pano.json"], environment: try writable())
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.contains("ok       rig file: rigs/pantilt.json: 2 axes on sim"))
        #expect(result.stdout.contains("ok       program: rigs/pano.json: panorama, within every limit"))
        #expect(result.stdout.contains("ok       state directory:") && result.stdout.contains("ok       lock directory:"))
        #expect(result.stdout.contains("doctor: ready"))
    }

    @Test(.blocking) func anInfeasibleProgramIsAProblemWithItsFix() throws {
        let program = try RigProcess.temporaryFile(
            "fast.json",
            contents:
                #"{"rig": "\#(RigProcess.packageRoot.path)/rigs/pantilt.json", "kind": "keyframes", "keyframes": {"pan": [{"t": 0, "value": 0}, {"t": 0.2, "value": 80}]}}"#
        )
        let result = try doctor(["--rig", "rigs/pantilt.json", "--program", program], environment: try writable())
        #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.contains("problem  program: \(program): breaks the rig's limits"), "\(result.stdout)")
        #expect(result.stdout.contains("fix: rig check \(program) lists every frame"))
    }

    @Test(.blocking) func aMissingI2CBusIsAProblemNamingTheFix() throws {
        let rig = try RigProcess.temporaryFile(
            "rig.json",
            contents: #"{"output": {"type": "pca9685", "bus": "/dev/i2c-250"}, "axes": [{"name": "pan", "channel": 0}]}"#)
        let result = try doctor(["--rig", rig], environment: try writable())
        #expect(result.status == 1)
        #expect(result.stdout.contains("problem  i2c: /dev/i2c-250 does not exist"), "\(result.stdout)")
        #expect(result.stdout.contains("fix: "))
    }

    /// The IMU: a bus that is not there, and a file that is not an I2C bus (the real
    /// driver's open and first read fail), each a problem naming the chip and the fix.
    @Test(.blocking) func anIMUThatCannotBeReadIsAProblem() throws {
        for (bus, said) in [("/dev/i2c-250", "problem  imu: /dev/i2c-250 does not exist"), ("/dev/null", "problem  imu: the MPU-6050 at 0x68 on /dev/null")] {
            let rig = try RigProcess.temporaryFile(
                "rig.json", contents: #"{"output": {"type": "sim"}, "axes": [{"name": "pan", "channel": 0}], "imu": {"bus": "\#(bus)"}}"#)
            let result = try doctor(["--rig", rig], environment: try writable())
            #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
            #expect(result.stdout.contains(said), "\(result.stdout)")
            #expect(result.stdout.contains("fix: "))
        }
    }

    @Test(.blocking) func directoriesThatCannotBeWrittenAreProblems() throws {
        let file = try RigProcess.temporaryFile("not-a-dir", contents: "x")
        let result = try doctor(["--rig", "rigs/pantilt.json"], environment: ["XDG_STATE_HOME": file, "RIG_LOCK_DIR": file + "/lock"])
        #expect(result.status == 1)
        #expect(result.stdout.contains("problem  state directory: \(file)/rig is not writable"), "\(result.stdout)")
        #expect(result.stdout.contains("problem  lock directory: \(file)/lock is not writable"), "\(result.stdout)")
    }

    @Test(.blocking) func aMalformedRigIsExit2WithItsPlace() throws {
        let rig = try RigProcess.temporaryFile("bad.json", contents: #"{"axes": [{"name": "pan", "channel": 99}]}"#)
        let result = try doctor(["--rig", rig])
        #expect(result.status == 2)
        #expect(result.stderr.hasPrefix("\(rig):1:"), "\(result.stderr)")
        #expect(result.stdout.isEmpty)
    }

    @Test(.blocking) func jsonListsEveryFinding() throws {
        let result = try doctor(["--rig", "rigs/pantilt.json", "--json"], environment: try writable())
        #expect(result.status == 0)
        let findings = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: String]])
        #expect(findings.first?["check"] == "rig file" && findings.first?["status"] == "ok")
        #expect(findings.allSatisfy { ["ok", "warning", "problem"].contains($0["status"] ?? "") && $0["message"] != nil })
        #expect(findings.contains { $0["check"] == "clock" })
    }

    /// Real time is tried, not guessed: with the capabilities (root here, as in CI) SCHED_FIFO
    /// and mlockall are ok; the same process without CAP_SYS_NICE and CAP_IPC_LOCK (setpriv)
    /// is warned, with the fix.
    @Test(.enabled(if: getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv"), "needs root and setpriv"))
    func realTimeIsTriedGoodAndWithoutTheCapabilities() throws {
        let env = try writable()
        // What this machine grants root (a container may withhold CAP_SYS_NICE): the doctor
        // must say the same.
        let fifoAllowed = Self.fifoAllowedHere()
        let good = try doctor(["--rig", "rigs/pantilt.json"], environment: env)
        #expect(
            good.stdout.contains(fifoAllowed ? "ok       real-time: SCHED_FIFO priority 50 allowed" : "warning  real-time: SCHED_FIFO refused"),
            "\(good.stdout)")
        let args = env.map { "\($0.key)=\($0.value)" } + [RigProcess.executable.path, "doctor", "--scan-seconds", "0", "--rig", "rigs/pantilt.json"]
        let limited = try RigProcess.run(
            ["--bounding-set=-sys_nice,-ipc_lock", "--inh-caps=-sys_nice,-ipc_lock", "/usr/bin/prlimit", "--rtprio=0", "--memlock=65536", "/usr/bin/env"]
                + args,
            program: URL(fileURLWithPath: "/usr/bin/setpriv"))
        #expect(limited.status == 0, "warnings only: \(limited.stdout)\(limited.stderr)")
        #expect(limited.stdout.contains("warning  real-time: SCHED_FIFO refused"), "\(limited.stdout)")
        #expect(limited.stdout.contains("warning  memlock: mlockall refused"), "\(limited.stdout)")
        #expect(limited.stdout.contains("fix: run as the package's service (LimitRTPRIO=50)"))
    }

    /// Whether a thread of this process may take SCHED_FIFO priority 50 (tried on a thread
    /// of its own, which then ends).
    static func fifoAllowedHere() -> Bool {
        let result = Mutex<Int32>(-1)
        let done = DispatchSemaphore(value: 0)
        Thread {
            var param = sched_param(sched_priority: 50)
            let r = pthread_setschedparam(pthread_self(), SCHED_FIFO, &param)
            result.withLock { $0 = r }
            done.signal()
        }.start()
        done.wait()
        return result.withLock { $0 } == 0
    }
}
