import FoundationEssentials
import Glibc
import RigCore
import RigFormat
import RigRuntime
import Subprocess
import SystemPackage

/// The machine's floor for `rig bench loop --compare floor`: `Benchmarks/c/floor_loop.c`, a
/// C loop that only sleeps to absolute deadlines, compiled with `cc` at run time and
/// measured as rig's loop is (same buckets, same percentile rule, same JSON).
enum FloorReferenceLoop {
    static let sourceName = "floor_loop.c"

    /// Compiles `source` with `cc -O2` (and `libraries`' pkg-config flags) into a fresh
    /// temporary folder; returns the binary.
    static func compile(source: String, libraries: [String] = []) throws(BenchError) -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("rig-floor-\(getpid())")
        do { try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true) } catch {
            throw BenchError("cannot create \(dir.path): \(errorText(error))")
        }
        let binary = dir.appendingPathComponent(URL(fileURLWithPath: source).deletingPathExtension().lastPathComponent).path
        var flags: [String] = []
        if !libraries.isEmpty {
            guard let text = toolOutput(["pkg-config", "--cflags", "--libs"] + libraries) else {
                throw BenchError("pkg-config --cflags --libs \(libraries.joined(separator: " ")) failed (Debian: pkg-config and the -dev packages)")
            }
            flags = text.split(whereSeparator: \.isWhitespace).map(String.init)
        }
        let status = runTool(["cc", "-O2", "-o", binary, source] + flags)
        guard status == 0 else {
            throw BenchError("cc -O2 -o \(binary) \(source) failed (exit status \(status)); the floor needs a C compiler (Debian: build-essential)")
        }
        return binary
    }

    /// Runs the compiled loop for `seconds` at `rateHz`, asking for rig's real-time settings
    /// when `realtime`, and reads the figures it prints.
    static func run(binary: String, rateHz: Double, seconds: Double, realtime: Bool) throws(BenchError) -> LoopFigures {
        let data = try childOutput(binary, [number(rateHz), number(seconds)] + (realtime ? ["realtime"] : []))
        do {
            return try JSONDecoder().decode(LoopFigures.self, from: Data(data))
        } catch {
            throw BenchError("\(binary) printed no figures rig understands: \(String(decoding: data.prefix(200), as: UTF8.self))")
        }
    }

    /// Removes the temporary folder `compile` made.
    static func remove(binary: String) {
        try? FileManager.default.removeItem(atPath: URL(fileURLWithPath: binary).deletingLastPathComponent().path)
    }

    private static func toolOutput(_ arguments: [String]) -> String? {
        (try? childOutput("/usr/bin/env", arguments)).map { String(decoding: $0, as: UTF8.self) }
    }

    private static func runTool(_ arguments: [String]) -> Int32 {
        guard case .success((.exited(let code), _)) = childRun("/usr/bin/env", arguments) else { return -1 }
        return code
    }
}

/// `rig bench loop --compare floor`: rig's loop and the floor in alternating pairs, and
/// the median over pairs of rig ÷ floor for each lateness percentile.
struct FloorComparison {
    var pairs: [(rig: LoopFigures, floor: LoopFigures)]

    struct Ratios {
        var p50: Double
        var p99: Double
        var p999: Double
    }

    /// The median of the per-pair ratios rig ÷ floor (a floor percentile of 0 µs counts as 1 µs).
    var medianRatio: Ratios {
        func median(_ value: (LoopFigures.Lateness) -> Double) -> Double {
            let ratios = pairs.map { value($0.rig.latenessMicroseconds) / max(value($0.floor.latenessMicroseconds), 1) }.sorted()
            guard !ratios.isEmpty else { return .nan }
            let mid = ratios.count / 2
            return ratios.count % 2 == 1 ? ratios[mid] : (ratios[mid - 1] + ratios[mid]) / 2
        }
        return Ratios(p50: median(\.p50), p99: median(\.p99), p999: median(\.p999))
    }

    var json: String {
        let r = medianRatio
        let list = pairs.map { "{\"rig\": \($0.rig.json), \"floor\": \($0.floor.json)}" }.joined(separator: ", ")
        return "\"pairs\": [\(list)], \"median_ratio\": {\"p50\": \(number(r.p50)), \"p99\": \(number(r.p99)), \"p999\": \(number(r.p999))}"
    }

    var table: [String] {
        var lines = ["pair  order        rig p50 / p99 / p99.9 / max / missed      floor p50 / p99 / p99.9 / max / missed"]
        for (k, pair) in pairs.enumerated() {
            func cells(_ f: LoopFigures) -> String {
                let l = f.latenessMicroseconds
                return "\(percentile(l.p50)) / \(percentile(l.p99)) / \(percentile(l.p999)) / \(microseconds(l.max)) / \(f.missed)"
            }
            let order = k % 2 == 0 ? "rig first  " : "floor first"
            lines.append(
                "\(String(k + 1).padded(toLength: 4))  \(order)  \(cells(pair.rig).padded(toLength: 45))  \(cells(pair.floor))"
            )
        }
        let r = medianRatio
        lines.append("")
        lines.append("median of pairs, rig ÷ floor: p50 \(fixed(r.p50, 2))×, p99 \(fixed(r.p99, 2))×, p99.9 \(fixed(r.p999, 2))×")
        return lines
    }
}

/// Runs a benchmark's child process (swift-subprocess) with `input` on its stdin and returns
/// what it printed on stdout (its stderr goes to ours unless `quiet`); an exit other than 0
/// is an error naming the command and saying `hint`.
func childOutput(_ executable: String, _ arguments: [String], input: [UInt8] = [], quiet: Bool = false, hint: String = "") throws(BenchError) -> [UInt8] {
    let ran = childRun(executable, arguments, input: input, quiet: quiet)
    switch ran {
    case .failure(let why): throw BenchError("cannot start \(executable): \(why)")
    case .success((.exited(0), let output)): return output
    case .success((let status, _)):
        throw BenchError("\(([executable] + arguments).joined(separator: " ")) failed (\(status))\(hint)")
    }
}

/// The exit status and stdout of a child run to its end, or why it could not be started.
func childRun(_ executable: String, _ arguments: [String], input: [UInt8] = [], quiet: Bool = false) -> Result<
    (TerminationStatus, [UInt8]), BenchError
> {
    do {
        return .success(
            try runBlocking {
                let errors = quiet ? try FileDescriptor.open("/dev/null", .writeOnly, options: [.closeOnExec]) : .standardError
                let result = try await Subprocess.run(
                    .path(FilePath(executable)), arguments: Arguments(arguments), input: .array(input), output: .bytes(limit: 1 << 28),
                    error: .fileDescriptor(errors, closeAfterSpawningProcess: quiet))
                return (result.terminationStatus, result.standardOutput)
            })
    } catch {
        return .failure(BenchError("\(error)"))
    }
}
