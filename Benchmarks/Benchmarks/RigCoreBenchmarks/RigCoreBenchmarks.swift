import Benchmark
import RigCore

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration.timeUnits = .nanoseconds
    // Allocations on the tick path must be zero: a tick benchmark whose p90 malloc count
    // is above its stored threshold (Thresholds/*.p90.json: 0, with no tolerance) fails
    // `swift package benchmark thresholds check`.
    let zeroMallocs: [BenchmarkMetric: BenchmarkThresholds] = [.mallocCountTotal: .init(absolute: [.p90: 0])]
    // No .cpuTotal: the harness reads /proc for it inside the measured region and would
    // add its own 16 allocations to every sample (see RigRuntimeBenchmarks' harness check).
    let tickMetrics: [BenchmarkMetric] = [.wallClock, .throughput, .mallocCountTotal]

    // Per-tick compute of the loop's step function. Each iteration plays 1,000 ticks of a
    // new player (made outside the measurement), so the first tick's work is measured too.
    let interpolations: [(String, Interpolation)] = [("linear", .linear), ("smooth", .smooth), ("bezier", Fixtures.easeInOutBezier)]
    for axes in [1, 4, 16] {
        for (name, interpolation) in interpolations {
            let rig = Fixtures.rig(axes: axes)
            // Long enough that no iteration reaches the end of the path.
            let motion = Fixtures.swings(axes: axes, interpolation: interpolation, seconds: 3_600)
            Benchmark("Player.tick \(axes) axes \(name)",
                      configuration: .init(metrics: tickMetrics, scalingFactor: .kilo, maxDuration: .seconds(1),
                                           maxIterations: 2_000, thresholds: zeroMallocs)) { benchmark in
                let box = PlayerBox(rig: rig, motion: motion)
                benchmark.startMeasurement()
                for _ in benchmark.scaledIterations {
                    blackHole(box.player.tick(into: &box.frame))
                }
                benchmark.stopMeasurement()
                blackHole(box.frame)
            }
        }
    }

    // The limit monitor and the limiter, per tick, on 16 axes.
    let rig16 = Fixtures.rig(axes: 16)
    let frames16: [Double] = {
        var player = Player(rig: rig16, motion: Fixtures.swings(axes: 16, interpolation: .smooth, seconds: 60), startPose: rig16.homePose)
        var frame = rig16.homePose, all: [Double] = []
        for _ in 0..<1_000 { _ = player.tick(into: &frame); all += frame }
        return all
    }()
    Benchmark("LimitMonitor.observe 16 axes",
              configuration: .init(metrics: tickMetrics, scalingFactor: .kilo, maxDuration: .seconds(1),
                                   maxIterations: 2_000, thresholds: zeroMallocs)) { benchmark in
        var monitor = LimitMonitor(axes: rig16.axes, tickSeconds: rig16.tickSeconds, startPose: rig16.homePose)
        var frame = rig16.homePose
        benchmark.startMeasurement()
        for k in benchmark.scaledIterations {
            for i in 0..<16 { frame[i] = frames16[k * 16 + i] }
            blackHole(monitor.observe(frame))
        }
        benchmark.stopMeasurement()
        blackHole(monitor.margins)
    }
    Benchmark("MotionLimiter.limit 16 axes",
              configuration: .init(metrics: tickMetrics, scalingFactor: .kilo, maxDuration: .seconds(1),
                                   maxIterations: 2_000, thresholds: zeroMallocs)) { benchmark in
        var limiter = MotionLimiter(axes: rig16.axes, tickSeconds: rig16.tickSeconds, startPose: rig16.homePose)
        var frame = rig16.homePose
        benchmark.startMeasurement()
        for k in benchmark.scaledIterations {
            for i in 0..<16 { frame[i] = frames16[k * 16 + i] }
            blackHole(limiter.limit(&frame))
        }
        benchmark.stopMeasurement()
        blackHole(frame)
    }

    // Planning and checking whole programs (what `rig check` and `rig play` do first).
    let planning = Benchmark.Configuration(metrics: [.wallClock, .cpuTotal, .mallocCountTotal, .peakMemoryResident],
                                           timeUnits: .milliseconds, maxDuration: .seconds(5), maxIterations: 20)
    let timelapseText = Fixtures.timelapseProgram(frames: 10_000)
    Benchmark("ProgramParser.parse timelapse 10,000 frames", configuration: planning) { benchmark in
        blackHole(try Fixtures.parse(timelapseText, file: "timelapse.json"))
    }
    Benchmark("FeasibilityChecker.check timelapse 10,000 frames", configuration: planning) { benchmark, program in
        blackHole(FeasibilityChecker.check(rig: program.rig, motion: program.motion, startPose: program.rig.homePose))
    } setup: {
        try Fixtures.parse(timelapseText, file: "timelapse.json")
    }
    Benchmark("PanoramaPlanner.plan 1,000 shots", configuration: .init(metrics: [.wallClock, .cpuTotal, .mallocCountTotal],
                                                                       timeUnits: .microseconds, maxDuration: .seconds(2))) { _ in
        blackHole(PanoramaPlanner.plan(Fixtures.panoramaSpec, currentPan: 0, currentTilt: 0))
    }
    Benchmark("FeasibilityChecker.check panorama 1,000 shots", configuration: planning) { benchmark, program in
        blackHole(FeasibilityChecker.check(rig: program.rig, motion: program.motion, startPose: program.rig.homePose))
    } setup: {
        try Fixtures.parse(Fixtures.panoramaProgram, file: "panorama.json")
    }

    // Loading a large program file: 16 axes × 2,000 keys (about 2.6 MB of JSON).
    let largeText = Fixtures.largeKeyframeProgram(axes: 16, keys: 2_000)
    Benchmark("ProgramParser.parse keyframes 16 axes × 2,000 keys", configuration: planning) { _ in
        blackHole(try Fixtures.parse(largeText, file: "large.json"))
    }

    // What `rig check` does with a 1,000,000-keyframe file (55 MB): parse once, play and
    // check every frame (1,000,000 ticks). Goal ≤ 5 s and ≤ 300 MB resident.
    let millionText = Fixtures.keyframeProgram(total: 1_000_000)
    Benchmark("rig check 1,000,000 keyframes (parse + check)",
              configuration: .init(metrics: [.wallClock, .cpuTotal, .mallocCountTotal, .peakMemoryResident],
                                   timeUnits: .milliseconds, maxDuration: .seconds(30), maxIterations: 5)) { _ in
        let program = try Fixtures.parse(millionText, file: "keyframes-1m.json")
        blackHole(FeasibilityChecker.check(rig: program.rig, motion: program.motion, startPose: program.rig.homePose))
    }

    // What `rig plan` does with a 10,000-shot panorama: parse (which plans the shots).
    // Goal ≤ 1 s.
    Benchmark("rig plan 10,000-shot panorama (parse + plan)",
              configuration: .init(metrics: [.wallClock, .cpuTotal, .mallocCountTotal],
                                   timeUnits: .milliseconds, maxDuration: .seconds(5), maxIterations: 20)) { _ in
        blackHole(try Fixtures.parse(Fixtures.panorama10kProgram, file: "panorama-10k.json"))
    }

    // A jerk-limited move: planning one (bisection per axis) and sampling a tick of it.
    Benchmark("PoseMove.plan 16 axes (S-curves)",
              configuration: .init(metrics: tickMetrics, scalingFactor: .kilo, maxDuration: .seconds(1),
                                   maxIterations: 2_000, thresholds: zeroMallocs)) { benchmark in
        var move = PoseMove(from: rig16.homePose, to: rig16.homePose, axes: rig16.axes, tickSeconds: rig16.tickSeconds)
        var from = rig16.homePose, to = rig16.homePose
        for i in 0..<16 { to[i] = Double(i * 5 - 40) }
        benchmark.startMeasurement()
        for k in benchmark.scaledIterations {
            from[k % 16] = Double(k % 7)
            move.plan(from: from, to: to, axes: rig16.axes, tickSeconds: rig16.tickSeconds)
        }
        benchmark.stopMeasurement()
        blackHole(move.ticks)
    }
}
