import ArgumentParser
import Dispatch
import FoundationEssentials
import Glibc
import RigCore
import RigFormat
import RigRuntime
import Synchronization

/// `rig bench liveview`: the camera's live view through `rig serve`, measured against the
/// same source read with no server.
struct BenchLiveViewCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "liveview",
        abstract: "Measure rig serve's live view: frames delivered, latency, a slow viewer, a lossy link, CPU, and shots with it on and off.",
        discussion: """
            On the simulated camera's live view (its test scene, --fps frames a second of \
            --width × --height JPEG), in one run: \
            floor: the same source read in this process by a plain loop (no server, no socket): \
            frames/s and captured → taken latency. \
            viewers: `rig serve` on the simulated pan/tilt head at rest, and for each count of \
            --viewers that many MJPEG viewers on loopback, each on a thread of its own: frames/s \
            each got against the source's, captured → received latency (the frames' own stamps, \
            CLOCK_MONOTONIC), and rig serve's CPU (user + system, /proc), with its camera's \
            drawing thread apart (a real camera draws in the camera); and with no viewer. \
            slow: a fast viewer beside a slow one (reads a frame every --slow-pause seconds, a \
            16 KiB receive buffer): how old the slow one's frames are when read, and how many \
            frames behind the fast one's newest. \
            lossy: 4 viewers through Benchmarks/python/lossy_link.py (each chunk 20 ± 5 ms late, \
            1 % held back one 200 ms retransmission timeout). \
            shots: a stepped program of --shots shots played twice, the live view off (no viewer) \
            then on (4 viewers): settled → confirmed of each shot from the shot log, and when \
            the live view was back after each confirmed shot. docs/performance.md has the figures.
            """
    )

    @Option(help: ArgumentHelp("The source's frames a second (1–60).", valueName: "fps"))
    var fps = 25.0

    @Option(help: ArgumentHelp("Frame width in pixels (16–1920).", valueName: "px"))
    var width = 640

    @Option(help: ArgumentHelp("Frame height in pixels (16–1080).", valueName: "px"))
    var height = 480

    @Option(help: ArgumentHelp("JPEG quality (10–100).", valueName: "q"))
    var quality = 75

    @Option(help: ArgumentHelp("Viewer counts, comma-separated (1–64 each).", valueName: "n,n,…"))
    var viewers = "1,4,16"

    @Option(help: ArgumentHelp("Seconds measured in each run (1–600).", valueName: "s"))
    var seconds = 10.0

    @Option(help: ArgumentHelp("Shots of each shots run (2–1000).", valueName: "n"))
    var shots = 20

    @Option(help: ArgumentHelp("The slow viewer's wait after each frame (0.05–10 s).", valueName: "s"))
    var slowPause = 0.5

    @Option(help: ArgumentHelp("Which runs, comma-separated: floor, viewers, slow, lossy, shots.", valueName: "runs"))
    var runs = "floor,viewers,slow,lossy,shots"

    @Option(help: ArgumentHelp("For the lossy run: the proxy script (default: found like the Python loop).", valueName: "path"))
    var linkScript: String?

    @Option(help: ArgumentHelp("Keep every file (rig, program, shot logs) in this folder (default: a temporary one, removed).", valueName: "dir"))
    var workDir: String?

    @Flag(help: "Print the figures as JSON.")
    var json = false

    private static let allRuns = ["floor", "viewers", "slow", "lossy", "shots"]
    private var chosen: [String] { runs.split(separator: ",").map { String($0).trimmed() } }
    private var counts: [Int] { viewers.split(separator: ",").compactMap { Int($0.trimmed()) } }

    func validate() throws {
        guard (1...60).contains(fps) else { throw ValidationError("--fps \(format(fps)): valid: 1…60") }
        guard (16...1920).contains(width), (16...1080).contains(height) else { throw ValidationError("--width 16…1920, --height 16…1080") }
        guard (10...100).contains(quality) else { throw ValidationError("--quality \(quality): valid: 10…100") }
        guard !counts.isEmpty, counts.count == viewers.split(separator: ",").count, counts.allSatisfy({ (1...64).contains($0) }) else {
            throw ValidationError("--viewers \(viewers): counts of 1…64, comma-separated")
        }
        guard (1...600).contains(seconds) else { throw ValidationError("--seconds \(format(seconds)): valid: 1…600") }
        guard (2...1000).contains(shots) else { throw ValidationError("--shots \(shots): valid: 2…1000") }
        guard (0.05...10).contains(slowPause) else { throw ValidationError("--slow-pause \(format(slowPause)): valid: 0.05…10 s") }
        guard !chosen.isEmpty, chosen.allSatisfy(Self.allRuns.contains) else {
            throw ValidationError("--runs \(runs): valid: some of \(Self.allRuns.joined(separator: ", ")), comma-separated")
        }
        if linkScript != nil, !chosen.contains("lossy") { throw ValidationError("--link-script needs the lossy run") }
    }

    private var preview: SimPreviewConfig {
        var config = SimPreviewConfig()
        config.fps = fps
        config.width = width
        config.height = height
        config.quality = quality
        return config
    }

    func run() throws {
        let directory = workDir ?? FileManager.default.temporaryDirectory.appendingPathComponent("rig-bench-liveview-\(getpid())").path
        var keep = workDir != nil
        defer { if !keep { try? FileManager.default.removeItem(atPath: directory) } }
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let report = try measure(in: directory)
            if json { print(report.json) } else { for line in report.lines { print(line) } }
        } catch let error as BenchError {
            keep = true
            printError("error: \(error)")
            printError("(the rig, the program and the shot logs are in \(directory))")
            throw ExitCode(1)
        }
    }

    private func measure(in directory: String) throws(BenchError) -> LiveViewBenchReport {
        let script =
            chosen.contains("lossy") ? try locateBenchmarkFile("python/\(BenchLossyLink.scriptName)", explicit: linkScript, option: "--link-script") : nil
        var report = LiveViewBenchReport(
            preview: preview, cpus: ProcessInfo.processInfo.activeProcessorCount, loadBefore: BenchStartupCommand.loadAverage())
        if chosen.contains("floor") { report.floor = try LiveViewFloor.run(preview: preview, seconds: seconds) }
        let serverRuns = chosen.filter { $0 != "floor" }
        if !serverRuns.isEmpty {
            let server = try BenchServe(
                executable: runningExecutablePath(), directory: directory, rig: rigText, programs: ["shots.json": shotsProgram],
                arguments: ["--max-connections", String((counts.max() ?? 4) + 16)])
            defer { server.stop() }
            if chosen.contains("viewers") {
                report.idleCPU = try idle(server)
                for n in counts { report.viewers.append(try viewers(n, port: server.port, server: server)) }
            }
            if chosen.contains("slow") { report.slow = try slow(server) }
            if let script {
                let link = try BenchLossyLink(script: script, targetPort: server.port, seed: 1)
                defer { _ = link.finish() }
                report.lossy = try viewers(4, port: link.port, server: server)
                report.linkStats = link.finish()
            }
            if chosen.contains("shots") {
                let off = try shotsRun(server, viewers: 0)
                let on = try shotsRun(server, viewers: 4)
                report.shots = LiveViewBenchReport.Shots(
                    count: shots, off: off.settledToConfirmed, on: on.settledToConfirmed, intervalOff: off.interval, intervalOn: on.interval,
                    stallsOff: off.stalls, stallsOn: on.stalls, back: on.back,
                    neverBack: on.neverBack)
            }
        }
        report.loadAfter = BenchStartupCommand.loadAverage()
        return report
    }

    // MARK: The rig and its program

    private var rigText: String {
        """
        {"name": "bench head with a live view", "loopRateHz": 100, "output": {"type": "sim"},
         "axes": [{"name": "pan", "channel": 0, "softLimits": [-85, 85], "maxVelocity": 60, "maxAcceleration": 240},
                  {"name": "tilt", "channel": 1, "softLimits": [-60, 60], "maxVelocity": 60, "maxAcceleration": 240}],
         "camera": {"type": "sim", "focusMs": 0, "shutterMs": 300, "afterShotMs": 0,
                    "preview": {"fps": \(number(fps)), "width": \(width), "height": \(height), "fovDeg": 60, "quality": \(quality)}}}
        """
    }

    /// --shots steps 20° apart, 0.2 s of settle, a 0.3 s shot each.
    private var shotsProgram: String {
        let steps = (0..<shots).map { #"{"pose": {"pan": \#($0 % 2 == 0 ? 10 : -10)}}"# }.joined(separator: ", ")
        return #"{"rig": "rig.json", "kind": "steps", "trigger": "auto", "settleSeconds": 0.2, "steps": [\#(steps)]}"#
    }

    // MARK: Runs

    private func idle(_ server: BenchServe) throws(BenchError) -> Double {
        let span = min(seconds, 5)
        let before = server.child.cpuSeconds
        let began = MonotonicClock().now()
        SystemThread.sleep(seconds: span)
        return (server.child.cpuSeconds - before) / (Double(MonotonicClock().now() - began) / 1e9)
    }

    /// `n` viewers on `port` (the server, or the lossy link in front of it): 1 s to settle
    /// in, then --seconds measured.
    private func viewers(_ n: Int, port: Int, server: BenchServe) throws(BenchError) -> BenchViewerFigures {
        var open: [BenchViewer] = []
        defer { for viewer in open { viewer.stop() } }
        for k in 0..<n { open.append(try BenchViewer(port: port, name: "v\(k + 1)")) }
        SystemThread.sleep(seconds: 1)
        try Self.check(open)
        let clock = MonotonicClock()
        let pid = server.child.pid
        let (serveBefore, drawingBefore) = (server.child.cpuSeconds, BenchChild.threadCPUSeconds(pid: pid, named: "rig-sim-liveview"))
        let from = clock.now()
        SystemThread.sleep(seconds: seconds)
        let to = clock.now()
        let (serveAfter, drawingAfter) = (server.child.cpuSeconds, BenchChild.threadCPUSeconds(pid: pid, named: "rig-sim-liveview"))
        try Self.check(open)
        let span = Double(to - from) / 1e9
        return BenchViewerFigures(
            viewers: open, from: from, to: to, serveCPU: (serveAfter - serveBefore) / span, drawingCPU: (drawingAfter - drawingBefore) / span)
    }

    private static func check(_ viewers: [BenchViewer]) throws(BenchError) {
        for viewer in viewers {
            if let why = viewer.ended { throw BenchError("viewer \(viewer.name)'s stream ended: \(why)") }
            if viewer.frames.isEmpty { throw BenchError("viewer \(viewer.name) got no frame in a second") }
        }
    }

    private func slow(_ server: BenchServe) throws(BenchError) -> LiveViewBenchReport.Slow {
        // The newest frame number the fast viewer has, when the slow one gets each of its.
        final class Behind: Sendable {
            let newest = Atomic<Int>(0)
            let counts = Mutex<[Double]>([])
        }
        let behind = Behind()
        let fast = try BenchViewer(port: server.port, name: "fast") { frame in behind.newest.max(frame.number, ordering: .relaxed) }
        defer { fast.stop() }
        let slow = try BenchViewer(port: server.port, name: "slow", pause: slowPause, receiveBuffer: 16 << 10) { frame in
            let ahead = behind.newest.load(ordering: .relaxed)
            behind.counts.withLock { $0.append(Double(max(0, ahead - frame.number))) }
        }
        defer { slow.stop() }
        SystemThread.sleep(seconds: seconds)
        try Self.check([fast, slow])
        let frames = slow.frames
        let numbers = frames.map(\.number)
        let span = Double((frames.last?.receivedNs ?? 0) - (frames.first?.receivedNs ?? 0)) / 1e9
        // The age of the frames read late in the run against early ones: a growing delay shows.
        let half = frames.count / 2
        return LiveViewBenchReport.Slow(
            pause: slowPause, frames: frames.count, fps: span > 0 ? Double(frames.count - 1) / span : .nan,
            skipped: zip(numbers, numbers.dropFirst()).reduce(0) { $0 + max(0, $1.1 - $1.0 - 1) },
            ageMs: BenchSpread(values: frames.map(\.latencyMs)), firstHalfAgeMs: BenchSpread(values: frames.prefix(half).map(\.latencyMs)),
            secondHalfAgeMs: BenchSpread(values: frames.suffix(from: half).map(\.latencyMs)), behind: BenchSpread(values: behind.counts.withLock { $0 }))
    }

    private struct ShotsFigures {
        var settledToConfirmed: BenchSpread
        /// From one shot's firing to the next's, on the wall clock (the log's `at`): a loop
        /// the live view held up would stretch it.
        var interval: BenchSpread
        /// The loop's "stalled" warnings in rig serve's log during the run.
        var stalls: Int
        var back: BenchSpread
        var neverBack: Int
    }

    /// Plays the program once with `viewers` viewers watching: settled → confirmed of each
    /// shot (its log's end − start), and when the first frame captured after the shot was
    /// confirmed reached the first viewer.
    private func shotsRun(_ server: BenchServe, viewers count: Int) throws(BenchError) -> ShotsFigures {
        var watching: [BenchViewer] = []
        defer { for viewer in watching { viewer.stop() } }
        for k in 0..<count { watching.append(try BenchViewer(port: server.port, name: "s\(k + 1)")) }
        if count > 0 {
            SystemThread.sleep(seconds: 1)
            try Self.check(watching)
        }
        let logs = server.runLogs
        let before = Set(logs.logs(of: "shots.json"))
        // The wall clock and CLOCK_MONOTONIC read together: the log's times are UTC.
        let wallMinusMono = Double(WallClock.nanoseconds()) - Double(MonotonicClock().now())
        let logBefore = server.log.count
        let reply = server.request("POST /api/play", body: #"{"program": "shots.json"}"#)
        guard reply.hasPrefix("HTTP/1.1 202") else { throw BenchError("rig serve did not play the shots program: \(reply.prefix(300))") }
        let deadline = MonotonicClock().now() + UInt64((60 + Double(shots) * 5) * 1e9)
        var log: ShotLog?
        while MonotonicClock().now() < deadline {
            if let path = logs.logs(of: "shots.json").first(where: { !before.contains($0) }),
                let text = try? String(contentsOfFile: path, encoding: .utf8), let read = try? ShotLog(text: text, file: path),
                read.events.contains(where: { if case .end = $0 { true } else { false } })
            {
                log = read
                break
            }
            SystemThread.sleep(seconds: 0.1)
        }
        guard let log else { throw BenchError("the shots program did not end in time (its log is in \(logs.path))") }
        let taken = log.events.compactMap { event -> ShotLogShot? in if case .shot(let s) = event, !s.interrupted { s } else { nil } }
        guard taken.count == shots else { throw BenchError("the shots program took \(taken.count) shots of \(shots)") }
        let stalls = server.log.dropFirst(logBefore).components(separatedBy: "the loop stalled").count - 1
        let frames = watching.first?.frames ?? []
        let fired = taken.compactMap { $0.at.flatMap(UTCTime.parse) }
        var back: [Double] = []
        var neverBack = 0
        for shot in taken where count > 0 {
            guard let at = shot.at.flatMap(UTCTime.parse) else { continue }
            let confirmedMono = at * 1e9 + (shot.endSeconds - shot.startSeconds) * 1e9 - wallMinusMono
            if let next = frames.first(where: { Double($0.capturedNs) >= confirmedMono }) {
                back.append((Double(next.receivedNs) - confirmedMono) / 1e6)
            } else {
                neverBack += 1
            }
        }
        return ShotsFigures(
            settledToConfirmed: BenchSpread(values: taken.map { ($0.endSeconds - $0.startSeconds) * 1000 }),
            interval: BenchSpread(values: zip(fired, fired.dropFirst()).map { ($1 - $0) * 1000 }), stalls: stalls, back: BenchSpread(values: back),
            neverBack: neverBack)
    }
}

/// What `rig bench liveview` measured, as text or JSON.
struct LiveViewBenchReport {
    struct Slow {
        var pause: Double
        var frames: Int
        var fps: Double
        var skipped: Int
        var ageMs: BenchSpread
        var firstHalfAgeMs: BenchSpread
        var secondHalfAgeMs: BenchSpread
        var behind: BenchSpread
    }

    struct Shots {
        var count: Int
        var off: BenchSpread
        var on: BenchSpread
        var intervalOff: BenchSpread
        var intervalOn: BenchSpread
        var stallsOff: Int
        var stallsOn: Int
        var back: BenchSpread
        var neverBack: Int
    }

    var preview: SimPreviewConfig
    var cpus: Int
    var loadBefore: Double
    var loadAfter = Double.nan
    var floor: LiveViewFloor.Figures?
    var idleCPU: Double?
    var viewers: [BenchViewerFigures] = []
    var slow: Slow?
    var lossy: BenchViewerFigures?
    var linkStats: BenchLossyLink.Stats?
    var shots: Shots?

    var lines: [String] {
        var out = [
            "rig bench liveview: the simulated camera's live view, \(format(preview.fps)) frames/s of \(preview.width)×\(preview.height) JPEG (quality \(preview.quality)), the rig at rest",
            "\(cpus) CPUs, load average \(rounded(loadBefore)) before, \(rounded(loadAfter)) after",
        ]
        if let f = floor {
            out.append("")
            out.append(
                "floor (the source read in-process, no server): \(fixed(f.fps, 2)) frames/s, captured → taken \(f.latencyMs.text(3)); drawing \(percent(f.drawingCPU, digits: 1)) of a core"
            )
        }
        if !viewers.isEmpty {
            out.append("")
            out.append("viewers on loopback:")
            if let idleCPU { out.append("  no viewer: rig serve \(percent(idleCPU, digits: 1)) of a core") }
            for row in viewers { out.append("  " + row.line) }
        }
        if let s = slow {
            out.append("")
            out.append(
                "slow viewer (a frame every \(format(s.pause)) s, 16 KiB receive buffer) beside a fast one: \(s.frames) frames (\(fixed(s.fps, 2))/s), \(s.skipped) skipped"
            )
            out.append(
                "  age when read \(s.ageMs.text()) (first half p50 \(fixed(s.firstHalfAgeMs.p50, 1)), second half p50 \(fixed(s.secondHalfAgeMs.p50, 1)) ms)")
            out.append("  frames behind the fast viewer's newest: \(s.behind.text(0, unit: ""))")
        }
        if let l = lossy {
            out.append("")
            out.append("through the lossy link (20 ± 5 ms each way, 1 % held 200 ms):")
            out.append("  " + l.line)
            if let k = linkStats {
                out.append(
                    "  link: \(k.chunks) chunks, \(k.held) held one RTO; delay p50 \(fixed(k.delayMsP50, 1)) ms, p99 \(fixed(k.delayMsP99, 1)) ms, max \(fixed(k.delayMsMax, 1)) ms"
                )
            }
        }
        if let s = shots {
            out.append("")
            out.append("shots: \(s.count) steps, 0.3 s shots; settled → confirmed (the shot log's end − start), and shot to shot (its wall-clock `at`):")
            out.append("  live view off: \(s.off.text()); shot to shot \(s.intervalOff.text()); the loop stalled \(s.stallsOff) times")
            out.append(
                "  live view on (4 viewers): \(s.on.text()); shot to shot \(s.intervalOn.text()); the loop stalled \(s.stallsOn) times; on/off p50 \(fixed(s.on.p50 / s.off.p50, 3)) and \(fixed(s.intervalOn.p50 / s.intervalOff.p50, 3)), p95 \(fixed(s.on.p95 / s.off.p95, 3)) and \(fixed(s.intervalOn.p95 / s.intervalOff.p95, 3))"
            )
            out.append(
                "  live view back after each confirmed shot (the first frame captured after it, received): \(s.back.text())\(s.neverBack > 0 ? "; \(s.neverBack) never" : "")"
            )
        }
        return out
    }

    var json: String {
        var fields = [
            "\"source\": {\"fps\": \(benchNumber(preview.fps)), \"width\": \(preview.width), \"height\": \(preview.height), \"quality\": \(preview.quality)}",
            "\"machine\": {\"cpus\": \(cpus), \"loadavg_1min_before\": \(benchNumber(loadBefore)), \"loadavg_1min_after\": \(benchNumber(loadAfter))}",
        ]
        if let floor { fields.append("\"floor\": \(floor.json)") }
        if !viewers.isEmpty {
            fields.append("\"idle_serve_core_percent\": \(benchNumber(idleCPU.map { $0 * 100 }))")
            fields.append("\"viewers\": [\(viewers.map(\.json).joined(separator: ", "))]")
        }
        if let s = slow {
            fields.append(
                "\"slow\": {\"pause_s\": \(benchNumber(s.pause)), \"frames\": \(s.frames), \"fps\": \(benchNumber(s.fps)), \"skipped\": \(s.skipped), "
                    + "\"age_ms\": \(s.ageMs.json), \"age_ms_first_half\": \(s.firstHalfAgeMs.json), \"age_ms_second_half\": \(s.secondHalfAgeMs.json), "
                    + "\"frames_behind_newest\": \(s.behind.json)}")
        }
        if let lossy {
            var text = String(lossy.json.dropLast())
            if let k = linkStats {
                text +=
                    ", \"link\": {\"chunks\": \(k.chunks), \"held\": \(k.held), \"delay_ms_p50\": \(benchNumber(k.delayMsP50)), \"delay_ms_p99\": \(benchNumber(k.delayMsP99)), \"delay_ms_max\": \(benchNumber(k.delayMsMax))}"
            }
            fields.append("\"lossy\": \(text)}")
        }
        if let s = shots {
            fields.append(
                "\"shots\": {\"count\": \(s.count), \"settled_to_confirmed_ms_off\": \(s.off.json), \"settled_to_confirmed_ms_on\": \(s.on.json), "
                    + "\"ratio_p50\": \(benchNumber(s.on.p50 / s.off.p50)), \"ratio_p95\": \(benchNumber(s.on.p95 / s.off.p95)), "
                    + "\"shot_to_shot_ms_off\": \(s.intervalOff.json), \"shot_to_shot_ms_on\": \(s.intervalOn.json), "
                    + "\"loop_stalls_off\": \(s.stallsOff), \"loop_stalls_on\": \(s.stallsOn), "
                    + "\"live_view_back_ms\": \(s.back.json), \"never_back\": \(s.neverBack)}")
        }
        return "{" + fields.joined(separator: ", ") + "}"
    }
}
