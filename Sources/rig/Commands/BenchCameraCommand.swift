import ArgumentParser
import Dispatch
import FoundationEssentials
import Glibc
import Logging
import RigCore
import RigFormat
import RigGPhoto2
import RigRuntime
import Synchronization

/// `rig bench camera`: rig's libgphoto2 shot path against the same calls in C.
struct BenchCameraCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "camera",
        abstract: "Time the gphoto2 camera: settled → confirmed per shot (beside a C floor), and a bracketed panorama's shots per minute.",
        discussion: """
            Uses the first camera libgphoto2 finds (scripts/bench-camera points it at libgphoto2's \
            virtual camera). Each pair runs rig's camera code (GPhoto2Camera: drain, trigger, wait \
            for the file and for capture-complete) and Benchmarks/c/gphoto2_floor.c (the same \
            libgphoto2 calls in C, compiled with cc), each in a fresh process, for --shots shots; \
            the ratio is the median over pairs of rig's median ÷ the floor's. Then `rig play` shoots \
            a 3-position panorama with 3-frame brackets on the simulated rig and the camera, and the \
            shots per minute come from its shot log.
            """
    )

    @Option(help: ArgumentHelp("Shots per process (1–24: the virtual camera's card fills at 26).", valueName: "n"))
    var shots = 12

    @Option(help: ArgumentHelp("rig/floor pairs (1–20).", valueName: "n"))
    var pairs = 5

    @Option(help: ArgumentHelp("The C floor's source (default: found like the loop's floor).", valueName: "path"))
    var floorSource: String?

    @Flag(help: "Print the figures as JSON.")
    var json = false

    @Option(help: .hidden) var childShots: Int?

    func validate() throws {
        guard (1...24).contains(shots) else { throw ValidationError("--shots: valid: 1…24") }
        guard (1...20).contains(pairs) else { throw ValidationError("--pairs: valid: 1…20") }
    }

    struct Shots: Codable {
        var shotMs: [Double]
    }

    func run() throws {
        if let childShots { return try child(childShots) }
        do throws(BenchError) { try measure() } catch {
            printError("error: \(error)")
            throw ExitCode(1)
        }
    }

    private func measure() throws(BenchError) {
        do {
            let source = try locateBenchmarkFile("c/gphoto2_floor.c", explicit: floorSource, option: "--floor-source")
            let floor = try FloorReferenceLoop.compile(source: source, libraries: ["libgphoto2"])
            defer { FloorReferenceLoop.remove(binary: floor) }
            var rows: [(rig: Double, floor: Double)] = []
            for pair in 1...pairs {
                let rig = try Self.shots(runningExecutablePath(), ["bench", "camera", "--child-shots", String(shots)])
                let base = try Self.shots(floor, [String(shots)])
                rows.append((median(rig.shotMs), median(base.shotMs)))
                if !json {
                    print("pair \(pair): rig \(fixed(rows[pair - 1].rig, 3)) ms, floor \(fixed(rows[pair - 1].floor, 3)) ms (median of \(shots) shots)")
                }
            }
            let ratio = median(rows.map { $0.rig / max($0.floor, 0.001) })
            let overhead = median(rows.map { $0.rig - $0.floor })
            let panorama = try Self.panoramaShotsPerMinute()
            if json {
                print(
                    #"{"pairs": [\#(rows.map { #"{"rigMs": \#(fixed($0.rig, 3)), "floorMs": \#(fixed($0.floor, 3))}"# }.joined(separator: ", "))], "medianRatio": \#(fixed(ratio, 3)), "medianOverheadMs": \#(fixed(overhead, 3)), "panoramaShotsPerMinute": \#(fixed(panorama.perMinute, 1)), "panoramaShots": \#(panorama.shots)}"#
                )
            } else {
                print(
                    "settled → confirmed: rig ÷ floor, median over \(pairs) pairs: \(fixed(ratio, 2))× (rig's own cost: \(fixed(overhead * 1000, 0)) µs a shot, its camera thread and bounds)"
                )
                print(
                    "bracketed panorama (3 positions × 3 frames, moves and settling included): \(fixed(panorama.perMinute, 1)) shots/min over \(panorama.shots) shots"
                )
            }
        }
    }

    /// One process's shots through rig's camera code, timed from the call (the player's
    /// "settled, shoot") to the camera's confirmation.
    private func child(_ count: Int) throws {
        let camera: GPhoto2Camera
        do { camera = try GPhoto2Camera.open(GPhoto2CameraConfig(), logger: Logger(label: "rig.bench")) } catch {
            printError("error: \(error)")
            throw ExitCode(1)
        }
        defer { camera.close() }
        let timing = ShotTiming(focusSeconds: 0, shutterHoldSeconds: 0, exposureWindowSeconds: 0, afterShotSeconds: 0, shotsPerStep: 1)
        var times: [Double] = []
        for step in 0..<count {
            let done = DispatchSemaphore(value: 0)
            let outcome = Mutex<Result<ShotReport, CameraError>?>(nil)
            let start = DispatchTime.now().uptimeNanoseconds
            camera.shoot(ShotRequest(timing: timing, step: step)) { result in
                outcome.withLock { $0 = result }
                done.signal()
            }
            done.wait()
            times.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6)
            if case .failure(let error) = outcome.withLock({ $0 }) {
                printError("error: shot \(step + 1): \(error)")
                throw ExitCode(1)
            }
        }
        print(#"{"shotMs": [\#(times.map { fixed($0, 3) }.joined(separator: ", "))]}"#)
    }

    private static func shots(_ executable: String, _ arguments: [String]) throws(BenchError) -> Shots {
        let data = try childOutput(executable, arguments)
        do { return try JSONDecoder().decode(Shots.self, from: Data(data)) } catch {
            throw BenchError("\(executable) printed no shot times: \(String(decoding: data.prefix(200), as: UTF8.self))")
        }
    }

    /// Plays a bracketed panorama with the camera and reads its pace from the shot log.
    private static func panoramaShotsPerMinute() throws(BenchError) -> (perMinute: Double, shots: Int) {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("rig-bench-camera-\(getpid())")
        defer { try? FileManager.default.removeItem(at: dir) }
        let rig =
            #"{"name": "bench", "loopRateHz": 100, "axes": [{"name": "pan", "channel": 0}, {"name": "tilt", "channel": 1}], "camera": {"type": "gphoto2", "afterShotMs": 0}}"#
        let program =
            #"{"rig": "rig.json", "kind": "panorama", "trigger": "auto", "settleSeconds": 0.2, "shoot": {"bracket": {"count": 3, "stepEV": 1}}, "panorama": {"lens": {"horizontalFovDeg": 60, "verticalFovDeg": 40}, "overlapPercent": 30, "pan": [-40, 40], "tilt": [0, 0]}}"#
        let log = dir.appendingPathComponent("run.jsonl").path
        do {
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            try rig.write(to: dir.appendingPathComponent("rig.json"), atomically: true, encoding: .utf8)
            try program.write(to: dir.appendingPathComponent("pano.json"), atomically: true, encoding: .utf8)
        } catch {
            throw BenchError("cannot write the benchmark's panorama in \(dir.path): \(errorText(error))")
        }
        _ = try childOutput(runningExecutablePath(), ["play", dir.appendingPathComponent("pano.json").path, "--log", log], quiet: true)
        let shots: [ShotLogShot]
        do {
            shots = try ShotLog(text: String(contentsOfFile: log, encoding: .utf8), file: log).shots
        } catch {
            throw BenchError("cannot read the panorama's shot log \(log): \(error)")
        }
        guard shots.count > 1, let first = shots.first, let last = shots.last, last.endSeconds > first.startSeconds else {
            throw BenchError("the panorama took \(shots.count) shots")
        }
        // Shot start to shot start over the run, moves and settling included.
        return (60 * Double(shots.count - 1) / (last.startSeconds - first.startSeconds), shots.count)
    }

    private func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return .nan }
        return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }
}
