import Foundation
import Glibc
import RigCore
import RigTestSupport
import Testing

/// `rig play` under signals, broken streams and bad output paths, run as a user runs it:
/// every way out brakes within the limits, parks and exits 0 (signals, a reader that went
/// away) or 1 (a failed write); what can be refused is refused before anything moves (exit 2).
@Suite(.serialized) struct StopAndRefuseTests {
    static let program = "rigs/move.json"

    /// The frames of a trace: within the limits on every frame (the trace's 4 decimals
    /// allowed for), stopped long before the 20 s program's end, standing at the park pose.
    func expectBrakedAndParked(_ trace: String, sourceLocation: Testing.SourceLocation = #_sourceLocation) throws {
        let rig = try Self.rig()
        let parsed = try Trace(path: trace)
        let frames = parsed.frames(axes: rig.axes.map(\.name))
        #expect(frames.count > 20, "the rig never moved", sourceLocation: sourceLocation)
        #expect(frames.count < 1500, "it was not stopped: \(frames.count) frames", sourceLocation: sourceLocation)
        let dt = rig.tickSeconds
        let (breaks, peakSpeed, lastVelocity) = parsed.limitBreaks(
            rig.axes.map { Trace.AxisLimits(name: $0.name, maxVelocity: $0.maxVelocity, maxAcceleration: $0.maxAcceleration) }, tickSeconds: dt,
            start: rig.homePose)
        #expect(breaks.isEmpty, "\(breaks.prefix(10))", sourceLocation: sourceLocation)
        #expect(peakSpeed > 0.5, "stopped while still at rest: nothing to brake", sourceLocation: sourceLocation)
        let last = try #require(frames.last)
        for (i, axis) in rig.axes.enumerated() {
            #expect(abs(last[i] - (axis.park ?? last[i])) < 1e-3, "axis \(axis.name) ended at \(last[i])", sourceLocation: sourceLocation)
            // At rest: the last tick of a rest-to-rest park averages a·dt/2 at most.
            #expect(abs(lastVelocity[i]) <= axis.maxAcceleration * dt / 2 + 0.02, sourceLocation: sourceLocation)
        }
    }

    static func rig() throws -> Rig {
        let path = RigProcess.packageRoot.appendingPathComponent("rigs/pantilt.json").path
        return try RigParser.parse(text: String(contentsOfFile: path, encoding: .utf8), file: path)
    }

    /// Waits (bounded) until the trace shows the rig under way.
    func waitUntilMoving(_ trace: String) {
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline, ((try? String(contentsOfFile: trace, encoding: .utf8))?.split(separator: "\n").count ?? 0) < 120 {
            Thread.sleep(forTimeInterval: 0.02)
        }
    }

    @Test(.blocking, arguments: [SIGHUP, SIGQUIT, SIGINT])
    func aSignalMidMoveBrakesParksAndExitsZero(signo: Int32) throws {
        let trace = try RigProcess.temporaryFile("signal.csv")
        let (process, out, err) = try RigProcess.start(["play", Self.program, "--trace", trace, "--no-realtime"])
        waitUntilMoving(trace)
        kill(process.processIdentifier, signo)
        _ = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationReason == .exit)
        #expect(process.terminationStatus == 0, "\(stderr)")
        #expect(stderr.contains("stop requested"))
        #expect(!stderr.contains("Backtrace") && !stderr.contains("Crash"), "\(stderr)")
        try expectBrakedAndParked(trace)
    }

    /// A signal in the first instant (as soon as rig's handlers are in place, while it is
    /// still reading its files) ends the run the documented way, exit 0, instead of being
    /// dropped while the program plays to its end.
    @Test(.blocking, arguments: [SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGQUIT])
    func aSignalWhileStartingEndsTheRun(signo: Int32) throws {
        let (process, out, err) = try RigProcess.start(["play", "rigs/pano.json", "--trigger", "auto", "--no-realtime"])
        let stderr = PipeCollector(err)
        let stdout = PipeCollector(out)
        // rig catches SIGQUIT (and the others) once its handler is set: the first moment it
        // can take a signal as a stop.
        let pid = process.processIdentifier
        let deadline = Date().addingTimeInterval(30)
        func handlersSet() -> Bool {
            // Until exec, /proc shows the forked test runner, whose handlers are its own.
            guard let exe = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/exe"),
                exe.hasSuffix("/rig")
            else { return false }
            guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
                let line = status.split(separator: "\n").first(where: { $0.hasPrefix("SigCgt:") }),
                let mask = UInt64(line.dropFirst("SigCgt:".count).trimmingCharacters(in: .whitespaces), radix: 16)
            else { return false }
            // All five caught (the Swift runtime's backtracer catches SIGQUIT on its own).
            return [SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGQUIT].allSatisfy { mask & (1 << UInt64($0 - 1)) != 0 }
        }
        while Date() < deadline, process.isRunning, !handlersSet() { Thread.sleep(forTimeInterval: 0.001) }
        kill(pid, signo)
        stderr.waitForEnd()
        stdout.waitForEnd()
        process.waitUntilExit()
        #expect(process.terminationReason == .exit, "\(stderr.text)")
        #expect(process.terminationStatus == 0, "\(stderr.text)")
        // Stopped before it moved, or (had setup been that quick) braked and parked: never
        // the whole panorama played.
        #expect(stderr.text.contains("before anything moved") || stderr.text.contains("stop requested"), "\(stderr.text)")
        #expect(!stderr.text.contains("Backtrace"), "\(stderr.text)")
    }

    /// SIGSTOP for 2 s mid-move, then SIGCONT: what the output received keeps the axes'
    /// speed limits in wall time (no backlog of 2 s of path sent in a burst); the rig was
    /// moving, so the run stops from rest, parks and says why (exit 1).
    @Test func aStoppedAndContinuedProcessSendsNoBurst() async throws {
        let trace = try RigProcess.temporaryFile("stall.csv")
        let (process, out, err) = try RigProcess.start(["play", Self.program, "--trace", trace, "--no-realtime"])
        let stderr = PipeCollector(err)
        let stdout = PipeCollector(out)
        waitUntilMoving(trace)
        kill(process.processIdentifier, SIGSTOP)
        // The stall under test is 2 s of wall time: this wait is the stimulus, not a sync.
        try await Task.sleep(for: .seconds(2))
        kill(process.processIdentifier, SIGCONT)
        stderr.waitForEnd()
        stdout.waitForEnd()
        process.waitUntilExit()
        #expect(process.terminationStatus == 1, "\(stderr.text)")
        #expect(stderr.text.contains("stalled"), "\(stderr.text)")
        let rig = try Self.rig()
        let rows = try Trace(path: trace).rows
        for axis in rig.axes {
            let mine = rows.filter { $0.axis == axis.name }
            #expect(mine.count > 100)
            // Over every window of at least 50 ms of wall time: no faster than the limit
            // (one tick of slack for the window's ends).
            var j = 0
            for k in mine.indices {
                while j < mine.count, mine[j].wall - mine[k].wall < 0.05 { j += 1 }
                guard j < mine.count else { break }
                let span = mine[j].wall - mine[k].wall
                let moved = abs(mine[j].position - mine[k].position)
                #expect(moved <= axis.maxVelocity * (span + rig.tickSeconds) + 1e-3, "axis \(axis.name): \(moved)° in \(span) s at wall \(mine[k].wall)")
            }
            #expect(abs((mine.last?.position ?? .nan) - (axis.park ?? 0)) < 1e-3)
        }
        // The stall is in the trace: a wall-time gap of over a second between two frames.
        let pan = rows.filter { $0.axis == "pan" }
        #expect(zip(pan, pan.dropFirst()).contains { $1.wall - $0.wall > 1 })
    }

    /// Through a shell: `rig play … | head -2`, `> /dev/full`, `>&-`. Returns rig's exit status.
    func shell(_ script: String, trace: String) throws -> (status: Int32, stdout: String, stderr: String) {
        let result = try RigProcess.run(
            ["-c", "set -o pipefail; " + script, RigProcess.executable.path, "play", Self.program, "--trace", trace, "--no-realtime"],
            program: URL(fileURLWithPath: "/bin/bash"))
        return (result.status, result.stdout, result.stderr)
    }

    @Test(.blocking) func aReaderThatGoesAwayEndsTheRunLikeSIGPIPE() throws {
        let trace = try RigProcess.temporaryFile("head.csv")
        // head exits after two lines; rig's next write to the pipe fails.
        let result = try shell(#""$0" "$@" | head -2"#, trace: trace)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.split(separator: "\n").count == 2)
        // The failed write's EPIPE or the SIGPIPE that comes with it, whichever is first.
        #expect(result.stderr.contains("Broken pipe") || result.stderr.contains("stop requested (SIGPIPE)"), "\(result.stderr)")
        try expectBrakedAndParked(trace)
    }

    @Test(.blocking) func stdoutAndStderrBothGoingAwayStillBrakeAndPark() throws {
        // Both streams fail, write after write: that is one stop, never an abort without braking.
        let trace = try RigProcess.temporaryFile("both.csv")
        let result = try shell(#""$0" "$@" 2>&1 | head -2"#, trace: trace)
        #expect(result.status == 0, "\(result.stdout)")
        try expectBrakedAndParked(trace)
    }

    @Test(.blocking, arguments: [(#""$0" "$@" > /dev/full"#, "No space left on device"), (#""$0" "$@" >&-"#, "Bad file descriptor")])
    func aFailedWriteToStdoutStopsSafelyWithExit1(script: String, message: String) throws {
        let trace = try RigProcess.temporaryFile("full.csv")
        let result = try shell(script, trace: trace)
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr.contains("error: writing to stdout failed: \(message)"), "\(result.stderr)")
        // The very first line failed: the rig never got going, and still ends parked and safe.
        let rig = try Self.rig()
        let frames = try Trace(path: trace).frames(axes: rig.axes.map(\.name))
        let last = try #require(frames.last)
        for (i, axis) in rig.axes.enumerated() { #expect(abs(last[i] - (axis.park ?? last[i])) < 1e-3) }
    }

    @Test(.blocking) func aTraceOnAFIFOIsRefusedBeforeAnythingMoves() throws {
        let fifo = try RigProcess.temporaryFile("trace.fifo")
        #expect(mkfifo(fifo, 0o600) == 0)
        let result = try RigProcess.run(["play", Self.program, "--trace", fifo, "--no-realtime"])
        #expect(result.status == 2)
        #expect(result.stderr.contains("--trace \(fifo): is a FIFO"), "\(result.stderr)")
        #expect(result.stdout.isEmpty, "nothing starts: no header")
    }

    /// The shot log goes through the one output-path check: not the program or its rig (the
    /// events would be appended to an input), not the trace, not a FIFO (it would hang).
    @Test(.blocking) func aShotLogThatIsAnInputTheTraceOrAFIFOIsRefused() throws {
        let dir = (try RigProcess.temporaryFile("x") as NSString).deletingLastPathComponent
        for name in ["pano.json", "pantilt.json"] {
            try FileManager.default.copyItem(atPath: RigProcess.packageRoot.appendingPathComponent("rigs/" + name).path, toPath: dir + "/" + name)
        }
        let program = dir + "/pano.json"
        let before = try String(contentsOfFile: program, encoding: .utf8)
        let fifo = dir + "/log.fifo"
        #expect(mkfifo(fifo, 0o600) == 0)
        let trace = dir + "/trace.csv"
        let cases: [(arguments: [String], message: String)] = [
            (["--log", program], "--log \(program): is one of this run's input files"),
            (["--log", dir + "/pantilt.json"], "--log \(dir)/pantilt.json: is one of this run's input files"),
            (["--log", trace, "--trace", trace], "--log \(trace): is also the --trace file"),
            (["--log", fifo], "--log \(fifo): is a FIFO"),
        ]
        for (arguments, message) in cases {
            let result = try RigProcess.run(["play", program, "--trigger", "auto", "--no-realtime"] + arguments)
            #expect(result.status == 2, "\(arguments): \(result.stderr)")
            #expect(result.stderr.contains(message), "\(result.stderr)")
            #expect(result.stdout.isEmpty, "nothing starts: no header")
        }
        #expect(try String(contentsOfFile: program, encoding: .utf8) == before)
    }

    /// `rig plot -o` goes through the same output-path check: never the program or its
    /// rig (which it once replaced with SVG), a FIFO or a directory.
    @Test(.blocking) func plotsOutputIsNeverAnInputAFIFOOrADirectory() throws {
        let dir = (try RigProcess.temporaryFile("x") as NSString).deletingLastPathComponent
        for name in ["move.json", "pantilt.json"] {
            try FileManager.default.copyItem(atPath: RigProcess.packageRoot.appendingPathComponent("rigs/" + name).path, toPath: dir + "/" + name)
        }
        let program = dir + "/move.json"
        let rig = try String(contentsOfFile: dir + "/pantilt.json", encoding: .utf8)
        let fifo = dir + "/plot.fifo"
        #expect(mkfifo(fifo, 0o600) == 0)
        for (target, message) in [
            (dir + "/pantilt.json", "is one of this run's input files"), (program, "is one of this run's input files"),
            (fifo, "is a FIFO"), (dir, "is a directory"),
        ] {
            let result = try RigProcess.run(["plot", program, "-o", target])
            #expect(result.status == 2, "\(target): \(result.stderr)")
            #expect(result.stderr.contains("error: -o \(target): \(message)"), "\(result.stderr)")
        }
        #expect(try String(contentsOfFile: dir + "/pantilt.json", encoding: .utf8) == rig)
        let fine = try RigProcess.run(["plot", program, "-o", dir + "/move.svg"])
        #expect(fine.status == 0, "\(fine.stderr)")
        #expect(
            try String(contentsOfFile: dir + "/move.svg", encoding: .utf8).hasPrefix("<svg")
                || (try String(contentsOfFile: dir + "/move.svg", encoding: .utf8)).contains("<svg"))
    }

    @Test(.blocking) func aTraceInAMissingDirectoryIsRefusedNamingTheOptionAndPath() throws {
        let path = try RigProcess.temporaryFile("x") + "/no/such/trace.csv"
        let result = try RigProcess.run(["play", Self.program, "--trace", path, "--no-realtime"])
        #expect(result.status == 2)
        #expect(result.stderr.contains("--trace \(path): the directory"), "\(result.stderr)")
        #expect(result.stdout.isEmpty)
    }

    @Test(.blocking, arguments: ["move.json", "pantilt.json"])
    func aTraceNamingAnInputFileIsRefusedAndTheFileSurvives(input: String) throws {
        let dir = (try RigProcess.temporaryFile("x") as NSString).deletingLastPathComponent
        for name in ["move.json", "pantilt.json"] {
            try FileManager.default.copyItem(atPath: RigProcess.packageRoot.appendingPathComponent("rigs/" + name).path, toPath: dir + "/" + name)
        }
        let before = try String(contentsOfFile: dir + "/" + input, encoding: .utf8)
        let result = try RigProcess.run(["play", dir + "/move.json", "--trace", dir + "/./" + input, "--no-realtime"])
        #expect(result.status == 2)
        #expect(result.stderr.contains("is one of this run's input files"), "\(result.stderr)")
        #expect(try String(contentsOfFile: dir + "/" + input, encoding: .utf8) == before)
    }

    /// A hard link names the same file under another path: the check compares the file's
    /// identity (device and inode), not its path, for the trace and the shot log alike.
    @Test(.blocking, arguments: ["--trace", "--log"])
    func anOutputThatIsAHardLinkToAnInputIsRefused(option: String) throws {
        let dir = (try RigProcess.temporaryFile("x") as NSString).deletingLastPathComponent
        for name in ["move.json", "pantilt.json"] {
            try FileManager.default.copyItem(atPath: RigProcess.packageRoot.appendingPathComponent("rigs/" + name).path, toPath: dir + "/" + name)
        }
        let before = try String(contentsOfFile: dir + "/move.json", encoding: .utf8)
        let link = dir + "/trace.csv"
        #expect(Glibc.link(dir + "/move.json", link) == 0)
        let result = try RigProcess.run(["play", dir + "/move.json", option, link, "--no-realtime", "--no-shoot"])
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stderr.contains("\(option) \(link): is one of this run's input files"), "\(result.stderr)")
        #expect(try String(contentsOfFile: dir + "/move.json", encoding: .utf8) == before)
    }

    @Test(.blocking) func theKeyboardTriggerRefusesAStdinThatIsNotATerminal() throws {
        let result = try RigProcess.run(["play", "rigs/pano.json", "--trigger", "keyboard", "--no-realtime"])
        #expect(result.status == 2)
        #expect(result.stderr.contains("--trigger keyboard"), "\(result.stderr)")
        #expect(result.stdout.isEmpty)
    }

    @Test(.blocking) func jogWithNoGamepadAndNoTerminalSaysWhatToDo() throws {
        let result = try RigProcess.run(["jog", "--rig", "rigs/pantilt.json", "--device", "/nonexistent/event99"])
        #expect(result.status == 2)
        #expect(result.stderr.contains("no gamepad found"), "\(result.stderr)")
        #expect(result.stderr.contains("--no-keyboard"))
    }

    /// Holds `resource`'s lock in a fresh lock directory as a running `rig play` would (this
    /// process's PID and a command line), runs `rig` with `arguments` against that directory
    /// and returns its exit status and standard error.
    private func runAgainstHeldLock(
        _ resource: String, arguments: [String], lockDir: String
    ) throws -> (status: Int32, stderr: String) {
        let fd = open(lockDir + "/\(resource).lock", O_RDWR | O_CREAT, 0o644)
        defer { close(fd) }
        #expect(flock(fd, LOCK_EX | LOCK_NB) == 0)
        let me = "\(getpid())\nrig play holder.json\n"
        _ = me.withCString { write(fd, $0, strlen($0)) }

        let process = TestProcess()
        process.executableURL = RigProcess.executable
        process.arguments = arguments
        process.currentDirectoryURL = RigProcess.packageRoot
        var environment = ProcessInfo.processInfo.environment
        environment["RIG_LOCK_DIR"] = lockDir
        environment["XDG_STATE_HOME"] = lockDir
        process.environment = environment
        let err = Pipe()
        process.standardError = err
        process.standardOutput = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, stderr)
    }

    @Test(.blocking) func aSecondProcessOnTheSamePCA9685IsRefusedNamingTheHolder() throws {
        let lockDir = (try RigProcess.temporaryFile("x") as NSString).deletingLastPathComponent
        // The first process's trace, which the second must not clobber.
        let trace = lockDir + "/first.csv"
        try "the first run's trace\n".write(toFile: trace, atomically: true, encoding: .utf8)
        let (status, stderr) = try runAgainstHeldLock(
            "pca9685-i2c-1-0x40", arguments: ["play", "rigs/move-pca9685.json", "--no-realtime", "--trace", trace], lockDir: lockDir)
        #expect(status == 1)
        #expect(stderr.contains("is in use by process \(getpid()) (rig play holder.json)"), "\(stderr)")
        #expect(!stderr.contains("/dev/i2c-1"), "it stopped before touching the bus: \(stderr)")
        #expect(try String(contentsOfFile: trace, encoding: .utf8) == "the first run's trace\n")
    }

    @Test(.blocking) func aSecondProcessOnTheSameCameraLinesIsRefusedNamingTheHolder() throws {
        // The camera's focus line is held; the refusal comes before libgpiod opens any line
        // (without the lock, this machine's missing gpiochip9 would be the error).
        let program = try RigProcess.temporaryFile(
            "camera.json",
            contents: #"""
                {"rig": {"axes": [{"name": "pan", "channel": 0}],
                         "camera": {"type": "gpio", "chip": "/dev/gpiochip9", "shutterLine": 27, "focusLine": 22}},
                 "kind": "steps", "trigger": "auto", "steps": [{"pose": {"pan": 0}}]}
                """#)
        let lockDir = (program as NSString).deletingLastPathComponent
        let (status, stderr) = try runAgainstHeldLock(
            "gpio-gpiochip9-22", arguments: ["play", program, "--no-realtime"], lockDir: lockDir)
        #expect(status == 1)
        #expect(stderr.contains("gpio-gpiochip9-22 is in use by process \(getpid()) (rig play holder.json)"), "\(stderr)")
        #expect(!stderr.contains("step 1"), "nothing moved: \(stderr)")
    }
}
