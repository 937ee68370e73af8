import ArgumentParser
import Dispatch
import FoundationEssentials
import Glibc
import RigCore
import RigFormat
import RigRuntime

#if canImport(Glibc)
    import Glibc
#endif

struct BenchStartupCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "startup",
        abstract: "Time `rig play` from process start to its first frame.",
        discussion: """
            Runs `rig play` (this same executable) on a program whose only motion is its first \
            frame, --runs times, and times each run from spawn to exit on CLOCK_MONOTONIC: \
            process start, parsing, the check, opening the simulated output, starting the loop, \
            the first frame, plus one more tick and the exit. So the figure is an upper bound of \
            start-to-first-frame, by about one tick and the exit. `rig --version`, timed the \
            same way, shows how much of it is process and runtime start alone.
            """
    )

    @Option(help: ArgumentHelp("How many runs of each.", valueName: "n"))
    var runs = 20

    @Option(help: ArgumentHelp("The rig's loop rate in Hz (the first frame comes one period after the loop starts).", valueName: "hz"))
    var rate: Double = 200

    @Flag(help: "Print the figures as JSON.")
    var json = false

    @Flag(help: "Pass --no-realtime to rig play.")
    var noRealtime = false

    func validate() throws {
        guard (1...1000).contains(runs) else { throw ValidationError("--runs \(runs): valid: 1…1000") }
        guard Rig.loopRateRangeHz.contains(rate) else {
            throw ValidationError(
                "--rate \(format(rate)): valid: \(format(Rig.loopRateRangeHz.lowerBound))…\(format(Rig.loopRateRangeHz.upperBound)) Hz, as in a rig file")
        }
    }

    func run() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("rig-bench-startup-\(ProcessInfo.processInfo.processIdentifier)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("first-frame.json").path
        try BenchProgram.firstFrameOnly(rateHz: rate).write(toFile: file, atomically: true, encoding: .utf8)

        let executable = runningExecutablePath()
        var play: [Double] = []
        var version: [Double] = []
        var playRSS: [Double] = []
        var versionRSS: [Double] = []
        let loadBefore = Self.loadAverage()
        do {
            for _ in 0..<runs {
                let p = try timeRun(executable, ["play", file, "--quiet"] + (noRealtime ? ["--no-realtime"] : []))
                play.append(p.milliseconds)
                playRSS.append(p.maxRSSMegabytes)
                let v = try timeRun(executable, ["--version"])
                version.append(v.milliseconds)
                versionRSS.append(v.maxRSSMegabytes)
            }
        } catch {
            printError("error: \(error)")
            throw ExitCode(1)
        }
        let loadAfter = Self.loadAverage()
        let playFigures = Spread(play)
        let versionFigures = Spread(version)
        let playMemory = Spread(playRSS)
        let versionMemory = Spread(versionRSS)
        let cpus = ProcessInfo.processInfo.activeProcessorCount
        if json {
            print(
                "{\"runs\": \(runs), \"rate_hz\": \(number(rate)), \"play_first_frame_upper_bound_ms\": \(playFigures.json), \"process_start_ms\": \(versionFigures.json), "
                    + "\"play_max_rss_mb\": \(playMemory.json), \"version_max_rss_mb\": \(versionMemory.json), "
                    + "\"machine\": {\"cpus\": \(cpus), \"loadavg_1min_before\": \(number(loadBefore)), \"loadavg_1min_after\": \(number(loadAfter))}}")
            return
        }
        print("rig bench startup: \(runs) runs each, rig at \(format(rate)) Hz (one tick = \(rounded(1000 / rate)) ms)\(noRealtime ? ", --no-realtime" : "")")
        print("")
        print("                                   min      p50      max")
        print("rig play, spawn → exit      \(playFigures.row)   (start → first frame ≤ this)")
        print("rig --version, spawn → exit \(versionFigures.row)   (process and runtime start)")
        print("")
        print("peak RSS (wait4 ru_maxrss)          min      p50      max")
        print("rig play                    \(playMemory.megabytesRow)")
        print("rig --version               \(versionMemory.megabytesRow)")
        print("")
        print("machine: \(cpus) CPU\(cpus == 1 ? "" : "s"), 1-minute load average \(rounded(loadBefore)) before, \(rounded(loadAfter)) after")
    }

    /// The 1-minute load average from /proc/loadavg (NaN where there is none).
    static func loadAverage() -> Double {
        guard let text = try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8),
            let first = text.split(separator: " ").first, let value = Double(first)
        else { return .nan }
        return value
    }

    /// Milliseconds from spawning `executable` to its exit; it must exit 0. Spawns with
    /// posix_spawn and reaps with wait4 (`BenchChild`): Foundation's `Process.waitUntilExit`
    /// polls its run loop and would round every run up by tens of milliseconds.
    /// Also returns the child's peak resident set (`wait4`'s `ru_maxrss`).
    private func timeRun(_ executable: String, _ arguments: [String]) throws(BenchError) -> (milliseconds: Double, maxRSSMegabytes: Double) {
        let start = DispatchTime.now().uptimeNanoseconds
        let child = try BenchChild(executable, arguments, output: .null)
        child.wait()
        let end = DispatchTime.now().uptimeNanoseconds
        guard child.exitedCleanly else {
            throw BenchError("`rig \(arguments.joined(separator: " "))` failed (\(child.ending)); run it by hand to see why")
        }
        return (Double(end - start) / 1e6, Double(child.usage.ru_maxrss) / 1024)  // ru_maxrss is in KiB on Linux
    }
}

/// Min, median and max of a few timings, in ms.
private struct Spread {
    var min: Double, p50: Double, max: Double

    init(_ values: [Double]) {
        let sorted = values.sorted()
        min = sorted.first ?? 0
        max = sorted.last ?? 0
        p50 = sorted.isEmpty ? 0 : sorted[(sorted.count - 1) / 2]
    }

    var json: String { "{\"min\": \(number(min)), \"p50\": \(number(p50)), \"max\": \(number(max))}" }
    var row: String { [min, p50, max].map { (fixed($0, 1) + " ms").leftPadded(to: 9) }.joined(separator: " ") }
    var megabytesRow: String { [min, p50, max].map { (fixed($0, 1) + " MB").leftPadded(to: 9) }.joined(separator: " ") }
}
