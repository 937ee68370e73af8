import Foundation
import Glibc
import Logging
import RigCore
import RigTestSupport
import Testing

@testable import RigRuntime

private func temporaryDirectory() throws -> String {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("rig-session-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    return dir
}

@Suite struct HardwareLockTests {
    @Test func aHeldLockRefusesASecondHolderNamingTheFirstAndIsFreeAfterRelease() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let first = try HardwareLock.acquire(["pca9685-i2c-1-0x40", "gpio-gpiochip0-13"], directory: dir)
        // flock locks belong to an open file: a second open in this process conflicts like another process.
        #expect(throws: HardwareLockError.self) { try HardwareLock.acquire(["gpio-gpiochip0-13"], directory: dir) }
        do {
            _ = try HardwareLock.acquire(["pca9685-i2c-1-0x40"], directory: dir)
            Issue.record("the second acquire succeeded")
        } catch {
            #expect(error.holderPID == getpid())
            // The holder's command line, cut to 200 characters for the message.
            let holder = try #require(error.holderCommand)
            #expect(!holder.isEmpty && CommandLine.arguments.joined(separator: " ").hasPrefix(holder))
            #expect(error.description.contains("pca9685-i2c-1-0x40 is in use by process \(getpid())"))
        }
        // Another resource is free.
        let other = try HardwareLock.acquire(["pca9685-i2c-1-0x41"], directory: dir)
        other.release()
        first.release()
        let again = try HardwareLock.acquire(["pca9685-i2c-1-0x40", "gpio-gpiochip0-13"], directory: dir)
        again.release()
    }

    @Test func allOrNothing() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let held = try HardwareLock.acquire(["b"], directory: dir)
        #expect(throws: HardwareLockError.self) { try HardwareLock.acquire(["a", "b"], directory: dir) }
        // "a" was let go when "b" failed.
        let a = try HardwareLock.acquire(["a"], directory: dir)
        a.release()
        held.release()
    }

    /// One device, however it is spelled, is one lock: a symlink and `.` segments resolve
    /// to the node, a bare name is looked up under /dev, a chip number is its gpiochip.
    @Test func aDeviceIsLockedByItsNodeNotItsSpelling() throws {
        let dev = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dev) }
        #expect(FileManager.default.createFile(atPath: dev + "/i2c-1", contents: nil))
        #expect(symlink(dev + "/i2c-1", dev + "/i2c-rig") == 0)
        for spelling in [dev + "/i2c-1", dev + "/i2c-rig", dev + "/./i2c-1", "i2c-rig", "i2c-1"] {
            #expect(HardwareLock.deviceNode(spelling, devDirectory: dev) == "i2c-1", "\(spelling)")
        }
        #expect(HardwareLock.deviceNode("0", numberedPrefix: "gpiochip", devDirectory: dev) == "gpiochip0")
        // A node that is not there keeps its spelling's name (nothing to resolve).
        #expect(HardwareLock.deviceNode("/dev/no-such-i2c-9", devDirectory: dev) == "no-such-i2c-9")
    }

    @Test func theSharedDirectoryIsEveryonesWhenItExistsWhateverTheEnvironment() throws {
        let parent = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: parent) }
        let shared = parent + "/rig"
        // A unit's environment and a shell's pick the same directory once it is there.
        #expect(HardwareLock.directory(environment: ["RIG_LOCK_DIR": shared], shared: shared) == shared)
        try FileManager.default.createDirectory(atPath: shared, withIntermediateDirectories: false)
        chmod(parent, 0o555)
        defer { chmod(parent, 0o755) }
        #expect(HardwareLock.directory(environment: [:], shared: shared) == shared)
        #expect(HardwareLock.directory(environment: ["XDG_RUNTIME_DIR": "/run/user/1000"], shared: shared) == shared)
    }

    @Test func aLockDirectoryMadeUnderAStickyParentAndItsLockFilesAreOpenToEveryUser() throws {
        let parent = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: parent) }
        #expect(chmod(parent, 0o1777) == 0)
        let dir = parent + "/rig"
        let old = umask(0o077)  // the units' UMask=0077
        defer { umask(old) }
        #expect(HardwareLock.prepareDirectory(dir) == 0)
        var status = stat()
        #expect(stat(dir, &status) == 0)
        #expect(status.st_mode & 0o7777 == 0o1777)
        let lock = try HardwareLock.acquire(["pca9685-i2c-1-0x40"], directory: dir)
        #expect(stat(dir + "/pca9685-i2c-1-0x40.lock", &status) == 0)
        #expect(status.st_mode & 0o777 == 0o666)
        guard geteuid() == 0, access("/usr/bin/setpriv", X_OK) == 0, access("/usr/bin/flock", X_OK) == 0 else {
            lock.release()
            return
        }
        // Another user (nobody): refused while root holds it, free once root let go, and
        // able to make a lock file of its own there.
        func asNobody(_ script: String) throws -> Int32 {
            let process = TestProcess()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
            process.arguments = ["--reuid=65534", "--regid=65534", "--clear-groups", "/bin/sh", "-c", script]
            try process.run()
            process.waitUntilExit()
            return process.terminationStatus
        }
        let file = dir + "/pca9685-i2c-1-0x40.lock"
        #expect(try asNobody("exec 9<>\(file) && flock -n 9") == 1)
        lock.release()
        #expect(try asNobody("exec 9<>\(file) && flock -n 9") == 0)
        #expect(try asNobody("exec 9<>\(dir)/gpio-gpiochip0-13.lock && flock -n 9") == 0)
        let again = try HardwareLock.acquire(["pca9685-i2c-1-0x40", "gpio-gpiochip0-13"], directory: dir)
        again.release()
    }

    @Test func aLockFileAnotherUserMadeWithoutWritePermissionStillLocks() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let file = dir + "/a.lock"
        #expect(FileManager.default.createFile(atPath: file, contents: nil, attributes: [.posixPermissions: 0o444]))
        guard geteuid() != 0 else { return }  // root opens it read-write anyway
        let first = try HardwareLock.acquire(["a"], directory: dir)
        #expect(throws: HardwareLockError.self) { try HardwareLock.acquire(["a"], directory: dir) }
        first.release()
    }

    @Test func lockFileNamesAreSafe() {
        #expect(HardwareLock.fileName("blecontrol-hci0-AA:BB:CC/../x") == "blecontrol-hci0-AA_BB_CC_.._x.lock")
    }
}

@Suite struct OutputPathTests {
    @Test func refusesWhatWouldBlockOrDestroyAndAcceptsANewFile() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let fifo = dir + "/fifo"
        #expect(mkfifo(fifo, 0o600) == 0)
        let input = dir + "/program.json"
        try "{}".write(toFile: input, atomically: true, encoding: .utf8)

        func problem(_ path: String, inputs: [String] = [], mustNotExist: Bool = false) -> String? {
            do {
                try OutputPath.check(path, option: "--trace", inputs: inputs, mustNotExist: mustNotExist)
                return nil
            } catch {
                #expect(error.description.hasPrefix("--trace \(path): "))
                return error.problem
            }
        }
        #expect(problem(fifo)?.contains("FIFO") == true)
        #expect(problem(dir)?.contains("directory") == true)
        #expect(problem("/dev/null")?.contains("not a regular file") == true)
        // Kernel files look regular; writing a trace or a log into them reaches the kernel.
        #expect(problem("/proc/sys/kernel/panic")?.contains("is on /proc, a kernel filesystem") == true)
        #expect(problem("/proc/rig.csv")?.contains("is on /proc, a kernel filesystem") == true)
        #expect(problem("/sys/kernel/rig.csv")?.contains("is on /sys, a kernel filesystem") == true)
        #expect(problem(dir + "/missing/x.csv")?.contains("does not exist") == true)
        #expect(problem("")?.contains("empty") == true)
        #expect(problem(dir + "/../" + (dir as NSString).lastPathComponent + "/program.json", inputs: [input])?.contains("input files") == true)
        #expect(problem(input, mustNotExist: true)?.contains("exists") == true)
        #expect(problem(input) == nil, "an existing regular file that is no input may be replaced")
        #expect(problem(dir + "/new.csv", inputs: [input]) == nil)
    }

    @Test func theTraceWriterRefusesAFIFOWithoutBlocking() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let fifo = dir + "/fifo"
        #expect(mkfifo(fifo, 0o600) == 0)
        // No reader: a blocking open would wait forever; non-blocking fails or is refused.
        #expect(throws: (any Error).self) { try TraceWriter(path: fifo, axes: [], pwmPeriodMicroseconds: 20_000) }
    }
}

/// The session runner as `rig serve` uses it: on a background thread, commanded through a
/// session's `mailbox`, watched through `status`, stopped with `requestShutdown()`.
@Suite struct RigSessionTests {
    static func options() -> SessionOptions {
        var options = SessionOptions(loop: LoopOptions(realtime: false, stopWhenLimited: false))
        // The test process's signals and streams are not the session's to take.
        options.trapSignals = false
        options.stopOnStreamFailure = false
        return options
    }

    /// Runs `session` on its own thread; the result arrives through the returned box.
    final class Background: @unchecked Sendable {
        let done = DispatchSemaphore(value: 0)
        var result: Result<SessionSummary, SessionError>?
        init(_ session: RigSession<CommandSource>) {
            let thread = Thread { [self] in
                do throws(SessionError) { result = .success(try session.run()) } catch { result = .failure(error) }
                done.signal()
            }
            thread.start()
        }
        func wait() throws -> SessionSummary {
            guard done.wait(timeout: .now() + 60) == .success, let result else { throw DeadlineExceeded() }
            return try result.get()
        }
    }

    @Test func aServerCommandsTheSourceFromAnotherThreadWatchesItAndStopsIt() async throws {
        let rig = testRig()
        let output = RecordingOutput()
        let start = [-40.0, 20]
        let session = RigSession(
            rig: rig, source: CommandSource(rig: rig, startPose: start), output: output,
            startPose: start, trigger: nil, options: Self.options(), logger: Logger(label: "test"),
            clock: ManualClock())
        #expect(session.status == nil)
        let running = Background(session)
        _ = try await poll { session.status.map { _ in true } }
        session.mailbox.post(.goTo(pose: [60, nil]))
        let arrived = try await poll { () -> LoopStatus? in
            guard let status = session.status, abs(status.positions[0] - 60) < 1e-9, status.velocities[0] == 0 else { return nil }
            return status
        }
        #expect(arrived.positions[1] == 20)
        session.requestShutdown()
        let summary = try running.wait()
        #expect(summary.end == .stopRequested)
        #expect(summary.exitCode == 0)
        #expect(summary.loop.fault == nil)
        // Every frame within the limits, parked (pan at 10), one shutdown.
        let log = output.log.withLock { $0 }
        var monitor = LimitMonitor(axes: rig.axes, tickSeconds: rig.tickSeconds, startPose: start)
        for commands in log.writes {
            let pose = rig.axes.indices.map { commands[$0].position(on: rig.axes[$0]) ?? 0 }
            #expect(monitor.observe(pose) == nil)
        }
        #expect(abs(summary.loop.finalPose[0] - 10) < 1e-9)
        #expect(log.shutdowns.count == 1)
    }

    @Test func aStopRequestedBeforeTheRunStillStartsNothingMovingAndEndsSafe() throws {
        let rig = testRig()
        let output = RecordingOutput()
        let start = [0.0, 0]
        let session = RigSession(
            rig: rig, source: CommandSource(rig: rig, startPose: start), output: output,
            startPose: start, trigger: nil, options: Self.options(), logger: Logger(label: "test"),
            clock: ManualClock())
        session.requestShutdown()
        let summary = try session.run()
        #expect(summary.end == .stopRequested)
        let log = output.log.withLock { $0 }
        #expect(log.shutdowns.count == 1)
        // Pan parks at 10 from rest: a limited move, nothing else.
        #expect(abs(summary.loop.finalPose[0] - 10) < 1e-9)
    }

    @Test func aRefusedTraceLeavesTheOutputUntouched() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let rig = testRig()
        let output = RecordingOutput()
        var options = Self.options()
        options.tracePath = dir + "/missing/trace.csv"
        let session = RigSession(
            rig: rig, source: CommandSource(rig: rig, startPose: rig.homePose),
            output: output, startPose: rig.homePose, trigger: nil, options: options, logger: Logger(label: "test"))
        do throws(SessionError) {
            _ = try session.run()
            Issue.record("the run started")
        } catch {
            guard case .outputPath(let problem) = error else {
                Issue.record("\(error)")
                return
            }
            #expect(problem.option == "--trace")
            #expect(error.exitCode == 2)
        }
        let log = output.log.withLock { $0 }
        #expect(log.started.isEmpty && log.writes.isEmpty && log.shutdowns.isEmpty)
    }

    /// A trigger drives the program only through the controls the session hands it (one
    /// typed interface): here redo at the first step, then next, then stop at the second.
    final class ScriptedTrigger: StepTrigger, @unchecked Sendable {
        let lock = NSLock()
        var controls: StepControls?
        var readies: [Int] = []
        var stopped = 0
        var label: String { "script" }
        func start(_ controls: StepControls) throws { lock.withLock { self.controls = controls } }
        func handle(_ event: PlayerEvent, stepCount: Int) {
            guard case .ready(let step) = event else { return }
            let (controls, count) = lock.withLock { () -> (StepControls?, Int) in
                readies.append(step)
                return (self.controls, readies.count)
            }
            switch count {
            case 1: controls?.redo()
            case 2: controls?.advance()
            default: controls?.stop()
            }
        }
        func stop() { lock.withLock { stopped += 1 } }
    }

    @Test func theTriggerDrivesTheProgramThroughTheSessionsControls() throws {
        let rig = testRig()
        let steps = [Step(pose: [20, 10], settleSeconds: 0.1, label: "a"), Step(pose: [-20, 30], settleSeconds: 0, label: "b")]
        let trigger = ScriptedTrigger()
        let session = RigSession(
            rig: rig, source: Player(rig: rig, motion: .stepped(steps), startPose: rig.homePose), output: RecordingOutput(),
            startPose: rig.homePose, trigger: trigger, options: Self.options(), logger: Logger(label: "test"), clock: ManualClock())
        let summary = try session.run()
        // Redo settles step 1 again; next goes on to step 2, where stop ends the run.
        #expect(trigger.lock.withLock { trigger.readies } == [0, 0, 1])
        #expect(summary.end == .stopRequested)
        #expect(summary.exitCode == 0)
        #expect(trigger.lock.withLock { trigger.stopped } == 1)
    }

    /// A camera the session owns: what happened to it, in order, with the output's log.
    final class PartCamera: Camera, @unchecked Sendable {
        let lock = NSLock()
        var events: [String] = []
        let output: RecordingOutput
        let failsToStart: Bool
        let exclusiveResources: [String]
        init(output: RecordingOutput, resources: [String], failsToStart: Bool = false) {
            self.output = output
            exclusiveResources = resources
            self.failsToStart = failsToStart
        }
        var label: String { "part" }
        var reportsShotDone: Bool { false }
        var isClosed: Bool { lock.withLock { events.contains("close") } }
        func shoot(_ request: ShotRequest, done: @escaping @Sendable (Result<ShotReport, CameraError>) -> Void) { done(.success(.none)) }
        func start() throws {
            let outputStarted = !output.log.withLock { $0.started }.isEmpty
            lock.withLock { events.append(outputStarted ? "start after output" : "start before output") }
            if failsToStart { throw CameraError("no lines") }
        }
        func close() { lock.withLock { events.append("close") } }
    }

    @Test func theCameraIsAPartLockedWithTheOutputStartedAfterItAndClosedOnce() throws {
        let rig = testRig()
        let output = RecordingOutput()
        let name = "test-camera-\(UUID().uuidString)"
        let camera = PartCamera(output: output, resources: [name])
        // While the session runs, its lock holds the camera's resources too.
        let probe = ProbePart(name: "probe", journal: Journal()) { door in
            #expect(throws: HardwareLockError.self) { try HardwareLock.acquire([name]).release() }
            door.stop()
        }
        let session = RigSession(
            rig: rig, source: CommandSource(rig: rig, startPose: rig.homePose), output: output,
            startPose: rig.homePose, camera: camera, parts: [probe], options: Self.options(), logger: Logger(label: "test"),
            clock: ManualClock())
        let summary = try session.run()
        #expect(summary.exitCode == 0)
        #expect(camera.lock.withLock { camera.events } == ["start after output", "close"])
        #expect(output.log.withLock { $0.shutdowns.count } == 1)
        // Released with the session.
        try HardwareLock.acquire([name]).release()
    }

    @Test func aCameraThatCannotStartEndsTheSessionSafeAndClosed() throws {
        let rig = testRig()
        let output = RecordingOutput()
        let camera = PartCamera(output: output, resources: [], failsToStart: true)
        let session = RigSession(
            rig: rig, source: CommandSource(rig: rig, startPose: rig.homePose), output: output,
            startPose: rig.homePose, trigger: nil, camera: camera, options: Self.options(), logger: Logger(label: "test"),
            clock: ManualClock())
        do throws(SessionError) {
            _ = try session.run()
            Issue.record("the session ran")
        } catch {
            guard case .partStart(let failure) = error else {
                Issue.record("\(error)")
                return
            }
            #expect(failure.part == "camera" && failure.cause == .unavailable && failure.detail.contains("no lines"))
            #expect(error.description == "camera: no lines")
            #expect(error.exitCode == 1)
        }
        #expect(camera.lock.withLock { camera.events } == ["start after output", "close"])
        #expect(output.log.withLock { $0.shutdowns.count } == 1)
    }

    /// A journal of what the parts were told, in order, across parts.
    final class Journal: @unchecked Sendable {
        let lock = NSLock()
        var lines: [String] = []
        func add(_ line: String) { lock.withLock { lines.append(line) } }
        var all: [String] { lock.withLock { lines } }
    }

    /// A part that writes down what it is told; `onStart` runs at its start.
    final class ProbePart: SessionPart, @unchecked Sendable {
        let name: String
        let journal: Journal
        let resources: [String]
        let failure: PartStartFailure?
        let onStart: (SessionDoor) -> Void
        init(
            name: String, journal: Journal, resources: [String] = [], failure: PartStartFailure? = nil,
            onStart: @escaping (SessionDoor) -> Void = { _ in }
        ) {
            self.name = name
            self.journal = journal
            self.resources = resources
            self.failure = failure
            self.onStart = onStart
        }
        var partName: String { name }
        var exclusiveResources: [String] { resources }
        func start(_ door: SessionDoor) throws(PartStartFailure) {
            journal.add("\(name) start")
            if let failure { throw failure }
            onStart(door)
        }
        func handle(_ event: LoopEvent) {
            if case .player(.finished, _) = event { journal.add("\(name) saw finished") }
        }
        func finish(_ outcome: SessionOutcome) {
            switch outcome {
            case .ran(let summary): journal.add("\(name) finish ran \(summary.end)")
            case .refused(let error): journal.add("\(name) finish refused \(error)")
            }
        }
    }

    /// Parts start in order once the output runs, hear the loop's events, and finish once
    /// each, in reverse order, with the one outcome: through a run stopped by a part, and
    /// through a part that cannot start (the ones after it never start, every one finishes,
    /// the output ends safe).
    @Test func partsStartInOrderAndFinishOnceInReverseWithOneOutcome() throws {
        let rig = testRig()
        let journal = Journal()
        let output = RecordingOutput()
        let first = ProbePart(name: "a", journal: journal)
        let second = ProbePart(name: "b", journal: journal) { door in door.stop() }
        let session = RigSession(
            rig: rig, source: CommandSource(rig: rig, startPose: rig.homePose), output: output, startPose: rig.homePose,
            parts: [first, second], options: Self.options(), logger: Logger(label: "test"), clock: ManualClock())
        let summary = try session.run()
        #expect(summary.end == .stopRequested)
        #expect(
            journal.all == [
                "a start", "b start", "a saw finished", "b saw finished", "b finish ran a stop request", "a finish ran a stop request",
            ])

        let failing = Journal()
        let refusedOutput = RecordingOutput()
        let failure = PartStartFailure(part: "b", cause: .unavailable, detail: "not there")
        let session2 = RigSession(
            rig: rig, source: CommandSource(rig: rig, startPose: rig.homePose), output: refusedOutput, startPose: rig.homePose,
            parts: [ProbePart(name: "a", journal: failing), ProbePart(name: "b", journal: failing, failure: failure), ProbePart(name: "c", journal: failing)],
            options: Self.options(), logger: Logger(label: "test"), clock: ManualClock())
        #expect(throws: SessionError.self) { try session2.run() }
        #expect(
            failing.all == [
                "a start", "b start", "c finish refused b: not there", "b finish refused b: not there", "a finish refused b: not there",
            ])
        #expect(refusedOutput.log.withLock { $0.shutdowns.count } == 1)
    }

    @Test func aRefusedSessionStillClosesItsCamera() throws {
        let rig = testRig()
        let output = RecordingOutput()
        let name = "test-camera-\(UUID().uuidString)"
        let held = try HardwareLock.acquire([name])
        defer { held.release() }
        let camera = PartCamera(output: output, resources: [name])
        let session = RigSession(
            rig: rig, source: CommandSource(rig: rig, startPose: rig.homePose), output: output,
            startPose: rig.homePose, trigger: nil, camera: camera, options: Self.options(), logger: Logger(label: "test"))
        #expect(throws: SessionError.self) { try session.run() }
        #expect(camera.lock.withLock { camera.events } == ["close"])
        #expect(output.log.withLock { $0.started.isEmpty && $0.shutdowns.isEmpty })
    }

    @Test func exitCodes() {
        func summary(_ end: SessionEnd, _ fault: LoopFault?) -> SessionSummary {
            SessionSummary(
                loop: LoopResult(
                    ticks: 1, lateness: LatencyStats(), cpuNanosecondsPerTick: 0, grant: RealtimeGrant(),
                    finalPose: [], fault: fault, traceRowsDropped: 0),
                stepsReady: 0, end: end, limiterInterventions: 0)
        }
        #expect(summary(.finished, nil).exitCode == 0)
        #expect(summary(.signal(SIGHUP), nil).exitCode == 0)
        #expect(summary(.signal(SIGINT), .aborted).exitCode == 0, "a second Ctrl-C")
        #expect(summary(.streamFailed(StreamFailure(stream: .stdout, errno: EPIPE)), nil).exitCode == 0)
        #expect(summary(.streamFailed(StreamFailure(stream: .stdout, errno: ENOSPC)), nil).exitCode == 1)
        #expect(summary(.finished, .output(RecordingOutput.busGone, timeSeconds: 1)).exitCode == 1)
        #expect(summary(.signal(SIGTERM), .limited(axis: "pan", timeSeconds: 1)).exitCode == 1)
    }
}
