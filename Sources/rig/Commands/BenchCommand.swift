import ArgumentParser
import Foundation
import RigCore
import RigRuntime

struct BenchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Measure rig on this machine: the real-time loop (beside a Python loop) and startup.",
        discussion: """
        Figures depend on the machine and on what else it is doing: say which load they \
        were taken under. docs/performance.md has the latest figures and how to reproduce them.
        """,
        subcommands: [BenchLoopCommand.self, BenchStartupCommand.self, BenchBLEControlCommand.self]
    )
}

struct BenchLoopCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "loop",
        abstract: "Run the real-time loop on the simulated rig and report its wake-up lateness.",
        discussion: """
        Plays a synthetic pan/tilt keyframe program of --seconds on the simulated output, in \
        the same loop `rig play` uses (its own thread, absolute CLOCK_MONOTONIC deadlines, \
        SCHED_FIFO and locked memory when allowed), and reports how late it woke for each \
        tick (p50, p99, p99.9, max), ticks missed (woke a whole period late or more) and \
        CPU time per tick. --compare python then runs Benchmarks/python/sleep_loop.py, a \
        loop paced with time.sleep as most servo scripts are, for as long and under the \
        same load, measured the same way.
        """
    )

    @Option(help: ArgumentHelp("Loop rate in Hz (20–500, as in a rig file).", valueName: "hz"))
    var rate: Double = 200

    @Option(help: ArgumentHelp("How long each loop runs, in seconds.", valueName: "s"))
    var seconds: Double = 10

    @Option(help: ArgumentHelp("Busy threads that spin for the whole measurement.", valueName: "n"))
    var load = 0

    @Option(help: ArgumentHelp("Also run a reference loop: python.", valueName: "loop"))
    var compare: String?

    @Option(help: ArgumentHelp("The Python reference loop (default: found next to the package or install).", valueName: "path"))
    var pythonScript: String?

    @Flag(help: "Print the figures as JSON.")
    var json = false

    @Flag(help: "Do not ask for SCHED_FIFO, locked memory and minimal timer slack (as `rig play --no-realtime`).")
    var noRealtime = false

    func validate() throws {
        guard Rig.loopRateRangeHz.contains(rate) else {
            throw ValidationError("--rate \(format(rate)): valid: \(format(Rig.loopRateRangeHz.lowerBound))…\(format(Rig.loopRateRangeHz.upperBound)) Hz, as in a rig file")
        }
        guard seconds * rate >= 1, seconds <= 3600 else {
            throw ValidationError("--seconds \(format(seconds)): valid: at least one tick (1/rate) and at most 3600")
        }
        guard (0...64).contains(load) else { throw ValidationError("--load \(load): valid: 0…64 threads") }
        if let compare, compare != "python" { throw ValidationError("--compare \(compare): valid: python") }
        if pythonScript != nil, compare == nil { throw ValidationError("--python-script needs --compare python") }
    }

    func run() throws {
        let program: Program
        do { program = try BenchProgram.parse(BenchProgram.swings(rateHz: rate, seconds: seconds), file: "<bench program>") } catch {
            printError("error: the synthetic program is malformed (a bug in rig bench): \(error.description)")
            throw ExitCode(1)
        }
        let rig = program.rig
        let startPose = rig.homePose
        guard FeasibilityChecker.check(rig: rig, motion: program.motion, startPose: startPose).feasible else {
            printError("error: the synthetic program breaks the rig's limits (a bug in rig bench); nothing measured")
            throw ExitCode(1)
        }
        let script: String?
        do { script = try compare.map { _ throws(BenchError) in try PythonReferenceLoop.locateScript(explicit: pythonScript) } } catch {
            printError("error: \(error)")
            throw ExitCode(2)
        }

        let busy = BusyLoad(threads: load)
        defer { busy.stop() }
        let output = SimOutput(config: SimOutputConfig(), rig: rig)
        try output.start(channels: rig.axes.map(OutputChannel.init),
                         initial: rig.axes.indices.map { rig.axes[$0].command(forPosition: startPose[$0]) })
        let loop = ControlLoop(rig: rig, source: Player(rig: rig, motion: program.motion, startPose: startPose), output: output,
                               clock: MonotonicClock(), options: LoopOptions(realtime: !noRealtime), startPose: startPose)
        loop.start()
        let result = loop.wait()
        if let fault = result.fault {
            printError("error: the loop stopped early: \(fault)")
            throw ExitCode(1)
        }

        var python: LoopFigures?
        if let script {
            do { python = try PythonReferenceLoop.run(script: script, rateHz: rate, seconds: seconds) } catch {
                printError("error: \(error)")
                throw ExitCode(1)
            }
        }
        busy.stop()

        let report = LoopComparison(rateHz: rate, seconds: seconds, rig: LoopFigures(result), python: python)
        if json {
            print(report.json)
            if !noRealtime, !result.grant.fifo {
                printError("note: SCHED_FIFO was not granted (run as root or give rig CAP_SYS_NICE): rig ran at normal priority")
            }
            return
        }
        let cpus = ProcessInfo.processInfo.activeProcessorCount
        print("rig bench loop: \(format(rate)) Hz for \(format(seconds)) s, \(load) busy thread\(load == 1 ? "" : "s") on \(cpus) CPU\(cpus == 1 ? "" : "s")")
        print("rig's loop thread: \(noRealtime ? "real-time not asked for (--no-realtime)" : result.grant.description)")
        if python != nil { print("python: time.sleep pacing at normal priority (\(script ?? ""))") }
        print("")
        for line in report.table { print(line) }
    }
}
