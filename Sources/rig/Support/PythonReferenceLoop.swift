import FoundationEssentials
import Glibc

/// The Python loop `rig bench loop --compare python` runs beside rig's:
/// `Benchmarks/python/sleep_loop.py`, paced with `time.sleep` as most servo scripts are.
enum PythonReferenceLoop {
    static let scriptName = "sleep_loop.py"

    /// Where the script is: `explicit` if given, else next to the package the running
    /// `rig` was built in (`<package>/Benchmarks/python/`, found by walking up from the
    /// executable), an install's `<prefix>/share/rig/`, or `Benchmarks/python/` under the
    /// current folder.
    static func locateScript(explicit: String?) throws(BenchError) -> String {
        try locateBenchmarkFile("python/\(scriptName)", explicit: explicit, option: "--python-script")
    }

    /// Runs the script with `python3` from PATH for `seconds` at `rateHz` and reads the
    /// figures it prints. Its stderr goes to ours.
    static func run(script: String, rateHz: Double, seconds: Double) throws(BenchError) -> LoopFigures {
        let data = try childOutput(
            "/usr/bin/env", ["python3", script, "--rate", number(rateHz), "--seconds", number(seconds)], hint: "; is python3 ≥ 3.7 on PATH?")
        do {
            return try JSONDecoder().decode(LoopFigures.self, from: Data(data))
        } catch {
            throw BenchError("python3 \(script) printed no figures rig understands: \(String(decoding: data.prefix(200), as: UTF8.self))")
        }
    }
}

/// Finds a file of the benchmark kit: `explicit` if given, else `Benchmarks/<relative>` next
/// to the package the running `rig` was built in (found by walking up from the executable),
/// an install's `<prefix>/share/rig/<name>`, or `Benchmarks/<relative>` under the current folder.
func locateBenchmarkFile(_ relative: String, explicit: String?, option: String) throws(BenchError) -> String {
    if let explicit {
        guard FileManager.default.isReadableFile(atPath: explicit) else {
            throw BenchError("\(option) \(explicit): no such readable file")
        }
        return explicit
    }
    let name = URL(fileURLWithPath: relative).lastPathComponent
    var candidates: [String] = []
    var dir = URL(fileURLWithPath: runningExecutablePath()).deletingLastPathComponent()
    while dir.path != "/" {
        candidates.append(dir.appendingPathComponent("Benchmarks/\(relative)").path)
        candidates.append(dir.appendingPathComponent("share/rig/\(name)").path)
        dir.deleteLastPathComponent()
    }
    candidates.append(
        URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
            .appendingPathComponent("Benchmarks/\(relative)").path)
    if let found = candidates.first(where: { FileManager.default.isReadableFile(atPath: $0) }) { return found }
    throw BenchError(
        "cannot find \(name) (looked in Benchmarks/\(relative) and share/rig/ above \(runningExecutablePath()), and in ./Benchmarks/); pass \(option) PATH")
}

/// A `rig bench` problem a user can act on.
struct BenchError: Error, CustomStringConvertible {
    var description: String

    init(_ description: String) {
        self.description = description
    }
}

/// The running executable, symlinks resolved (`/proc/self/exe` on Linux).
func runningExecutablePath() -> String {
    if let path = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") { return path }
    let argument0 = CommandLine.arguments.first ?? "rig"
    return URL(fileURLWithPath: argument0, relativeTo: URL(fileURLWithPath: FileManager.default.currentDirectoryPath))
        .resolvingSymlinksInPath().path
}
