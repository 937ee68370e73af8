import ArgumentParser
import FoundationEssentials
import Glibc
import RigCore
import RigFormat
import RigRuntime

struct BenchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Measure rig on this machine: the real-time loop (beside a Python loop) and startup.",
        discussion: """
            Figures depend on the machine and on what else it is doing: say which load they \
            were taken under. docs/performance.md has the latest figures and how to reproduce them.
            """,
        subcommands: [
            BenchLoopCommand.self, BenchStartupCommand.self, BenchBLEControlCommand.self, BenchPCA9685Command.self, BenchMovesCommand.self,
            BenchCameraCommand.self, BenchRampCommand.self, BenchServeCommand.self, BenchSettleCommand.self, BenchCalibrateCommand.self,
            BenchGroupCommand.self, BenchLiveViewCommand.self,
        ]
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
            same load, measured the same way. --compare floor compiles Benchmarks/c/floor_loop.c \
            with cc (a C loop that only sleeps to absolute deadlines, with the same real-time \
            settings) and runs it and rig's loop in --pairs alternating pairs under the same \
            load, then reports each pair and the median over pairs of rig ÷ floor.
            """
    )

    @Option(help: ArgumentHelp("Loop rate in Hz (20–500, as in a rig file).", valueName: "hz"))
    var rate: Double = 200

    @Option(help: ArgumentHelp("How long each loop runs, in seconds.", valueName: "s"))
    var seconds: Double = 10

    @Option(help: ArgumentHelp("Busy threads that spin for the whole measurement.", valueName: "n"))
    var load = 0

    @Option(help: ArgumentHelp("Also run a reference loop: python, or floor (the machine's floor, a C loop).", valueName: "loop"))
    var compare: String?

    @Option(help: ArgumentHelp("With --compare floor: how many rig/floor pairs to run (1–100).", valueName: "n"))
    var pairs: Int?

    @Option(help: ArgumentHelp("With --compare floor: the C floor loop's source (default: found like the Python loop).", valueName: "path"))
    var floorSource: String?

    @Option(help: ArgumentHelp("The Python reference loop (default: found next to the package or install).", valueName: "path"))
    var pythonScript: String?

    @Flag(help: "Print the figures as JSON.")
    var json = false

    @Flag(help: "Do not ask for SCHED_FIFO, locked memory and minimal timer slack (as `rig play --no-realtime`).")
    var noRealtime = false

    func validate() throws {
        guard Rig.loopRateRangeHz.contains(rate) else {
            throw ValidationError(
                "--rate \(format(rate)): valid: \(format(Rig.loopRateRangeHz.lowerBound))…\(format(Rig.loopRateRangeHz.upperBound)) Hz, as in a rig file")
        }
        guard seconds * rate >= 1, seconds <= 3600 else {
            throw ValidationError("--seconds \(format(seconds)): valid: at least one tick (1/rate) and at most 3600")
        }
        guard (0...64).contains(load) else { throw ValidationError("--load \(load): valid: 0…64 threads") }
        if let compare, compare != "python", compare != "floor" { throw ValidationError("--compare \(compare): valid: python, floor") }
        if pythonScript != nil, compare != "python" { throw ValidationError("--python-script needs --compare python") }
        if pairs != nil || floorSource != nil, compare != "floor" { throw ValidationError("--pairs and --floor-source need --compare floor") }
        if let pairs, !(1...100).contains(pairs) { throw ValidationError("--pairs \(pairs): valid: 1…100") }
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
        var floorBinary: String?
        do {
            script = compare == "python" ? try PythonReferenceLoop.locateScript(explicit: pythonScript) : nil
            if compare == "floor" {
                let source = try locateBenchmarkFile("c/\(FloorReferenceLoop.sourceName)", explicit: floorSource, option: "--floor-source")
                floorBinary = try FloorReferenceLoop.compile(source: source)
            }
        } catch {
            printError("error: \(error)")
            throw ExitCode(2)
        }
        defer { if let floorBinary { FloorReferenceLoop.remove(binary: floorBinary) } }

        let busy = BusyLoad(threads: load)
        defer { busy.stop() }
        // Alternating pairs: rig first in odd pairs, the floor first in even ones, so a
        // machine that changes during the run weighs on both alike.
        var floorPairs: [(rig: LoopFigures, floor: LoopFigures)] = []
        let result = try runRigLoop(program: program, startPose: startPose)
        var pageFaults = result.pageFaultsAfterFirstTick
        if let floorBinary {
            for k in 0..<(pairs ?? 5) {
                do {
                    if k % 2 == 0 {
                        let rigRun = k == 0 ? result : try runRigLoop(program: program, startPose: startPose)
                        if k > 0 { pageFaults = pageFaults + rigRun.pageFaultsAfterFirstTick }
                        let floor = try FloorReferenceLoop.run(binary: floorBinary, rateHz: rate, seconds: seconds, realtime: !noRealtime)
                        floorPairs.append((LoopFigures(rigRun), floor))
                    } else {
                        let floor = try FloorReferenceLoop.run(binary: floorBinary, rateHz: rate, seconds: seconds, realtime: !noRealtime)
                        let rigRun = try runRigLoop(program: program, startPose: startPose)
                        pageFaults = pageFaults + rigRun.pageFaultsAfterFirstTick
                        floorPairs.append((LoopFigures(rigRun), floor))
                    }
                } catch let error as BenchError {
                    printError("error: \(error)")
                    throw ExitCode(1)
                }
            }
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
        let floorReport = floorPairs.isEmpty ? nil : FloorComparison(pairs: floorPairs)
        if json {
            var text = report.json
            if let floorReport { text = String(text.dropLast()) + ", " + floorReport.json + "}" }
            text =
                String(text.dropLast())
                + ", \"rig_page_faults_after_first_tick\": {\"minor\": \(pageFaults.minor), \"major\": \(pageFaults.major)}}"
            print(text)
            if !noRealtime, !result.grant.fifo {
                printError("note: SCHED_FIFO was not granted (run as root or give rig CAP_SYS_NICE): rig ran at normal priority")
            }
            return
        }
        let cpus = ProcessInfo.processInfo.activeProcessorCount
        print("rig bench loop: \(format(rate)) Hz for \(format(seconds)) s, \(load) busy thread\(load == 1 ? "" : "s") on \(cpus) CPU\(cpus == 1 ? "" : "s")")
        print("rig's loop thread: \(noRealtime ? "real-time not asked for (--no-realtime)" : result.grant.description)")
        print(
            "rig's loop thread: page faults after the first tick, all rig runs: \(pageFaults.minor) minor, \(pageFaults.major) major"
        )
        if python != nil { print("python: time.sleep pacing at normal priority (\(script ?? ""))") }
        if let floorReport {
            print(
                "floor: \(FloorReferenceLoop.sourceName) compiled with cc -O2, \(noRealtime ? "no real-time settings" : "asking for the same real-time settings"); \(floorReport.pairs.count) pairs"
            )
            print("")
            for line in floorReport.table { print(line) }
            return
        }
        print("")
        for line in report.table { print(line) }
    }

    /// One run of rig's loop on the simulated output (the one `rig play` uses).
    private func runRigLoop(program: Program, startPose: [Double]) throws -> LoopResult {
        let rig = program.rig
        let output = SimOutput(config: SimOutputConfig(), rig: rig)
        try output.start(
            channels: rig.axes.map(OutputChannel.init),
            initial: rig.axes.indices.map { rig.axes[$0].command(forPosition: startPose[$0]) })
        // The program host, as `rig play` runs a program (not a bare player no command runs).
        let hosted = HostedProgram(name: "bench", motion: program.motion, trigger: .auto)
        let loop = ControlLoop(
            rig: rig, source: ProgramHost(rig: rig, startPose: startPose, program: hosted, endsWithProgram: true), output: output,
            clock: MonotonicClock(), options: LoopOptions(realtime: !noRealtime), startPose: startPose)
        loop.start()
        let result = loop.wait()
        if let fault = result.fault {
            printError("error: the loop stopped early: \(fault)")
            throw ExitCode(1)
        }
        return result
    }
}
