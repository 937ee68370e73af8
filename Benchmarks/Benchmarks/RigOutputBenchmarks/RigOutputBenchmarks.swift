import Benchmark
import Logging
import RigBLEControl
import RigCore
import RigPCA9685
import RigRuntime

/// The outputs' per-tick work: the PCA9685 encoding through the real driver (on a counting
/// bus: no kernel), and the BLEControl scheduler. Each iteration is one tick; a sample is
/// 1,000 of them. Allocations must be zero (Thresholds/*.p90.json, no tolerance).
let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration.timeUnits = .nanoseconds
    let zeroMallocs: [BenchmarkMetric: BenchmarkThresholds] = [.mallocCountTotal: .init(absolute: [.p90: 0])]
    let tickMetrics: [BenchmarkMetric] = [.wallClock, .throughput, .mallocCountTotal]
    let calibration = try? Calibration.make(points: [(-90, 500), (90, 2500)], inverted: false).get()

    /// 16 servo axes on channels 0…15, smooth ±30° swings every 2 s, out of phase.
    func swings(axes count: Int) -> (Rig, Motion) {
        let axes = (0..<count).map { i in
            Axis(name: "axis\(i)", kind: .servo, channel: i, calibration: calibration, home: 0, park: nil,
                 softMin: -85, softMax: 85, maxVelocity: 90, maxAcceleration: 180, idle: .hold)
        }
        let rig = Rig(name: "bench \(count) axes", axes: axes, output: OutputConfig(type: PCA9685OutputConfig.type), loopRateHz: 200)
        let tracks: [AxisTrack?] = (0..<count).map { i in
            var keys = [Keyframe(time: 0, value: 0)]
            for k in 1...1_800 { keys.append(Keyframe(time: Double(2 * k) + Double(i) * 0.1, value: k % 2 == 1 ? 30 : -30)) }
            return AxisTrack(keys: keys)
        }
        return (rig, .continuous(tracks: tracks, durationSeconds: 3_600))
    }

    // The loop's step function and the PCA9685 encoding of its frame, 16 axes: player tick,
    // channel commands, counts, register diff, burst plan, bus writes.
    let (rig16, motion16) = swings(axes: 16)
    Benchmark("PCA9685 tick 16 axes (player + encoding + bursts)",
              configuration: .init(metrics: tickMetrics, scalingFactor: .kilo, maxDuration: .seconds(1),
                                   maxIterations: 2_000, thresholds: zeroMallocs)) { benchmark in
        let box = PCA9685Box(rig: rig16, motion: motion16)
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations { box.tick() }
        benchmark.stopMeasurement()
        blackHole(box.sent)
    }

    // The BLEControl scheduler: 8 board channels (a board's maximum), every target moving,
    // over the 960 B/s budget, one tick each.
    Benchmark("BLEControlScheduler.tick 8 channels over budget",
              configuration: .init(metrics: tickMetrics, scalingFactor: .kilo, maxDuration: .seconds(1),
                                   maxIterations: 2_000, thresholds: zeroMallocs)) { benchmark in
        var scheduler = BLEControlScheduler(boardChannels: Array(0..<8), commands: Array(repeating: BLEControlCommand.servoValue, count: 8),
                                            maxWriteBytes: 20, linkBytesPerSecond: 960)
        var tick = 0
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            tick += 1
            for channel in 0..<8 { scheduler.setTarget(channel, value: 500 + (tick * 7 + channel * 31) % 400) }
            scheduler.tick(nowSeconds: Double(tick) * 0.005, maxWrites: 8)
        }
        benchmark.stopMeasurement()
        blackHole(scheduler.writeCount)
    }
}

/// A player feeding a started PCA9685 output on a counting bus, so the measured loop only
/// ticks.
final class PCA9685Box {
    var player: Player
    var frame: [Double]
    var commands: [ChannelCommand]
    var sent: [Double]
    let rig: Rig
    let output: PCA9685Output
    let bus = CountingI2CBus()

    init(rig: Rig, motion: Motion) {
        self.rig = rig
        player = Player(rig: rig, motion: motion, startPose: rig.homePose)
        frame = rig.homePose
        commands = rig.axes.map { $0.command(forPosition: $0.home) }
        sent = [Double](repeating: 0, count: rig.axes.count)
        output = PCA9685Output(config: PCA9685OutputConfig(), bus: bus, stateDirectory: nil, logger: Logger(label: "bench"),
                               healthCheckInterval: .seconds(1 << 40))
        try? output.start(channels: rig.axes.map(OutputChannel.init), initial: commands)
    }

    @inline(__always)
    func tick() {
        _ = player.tick(into: &frame)
        for i in rig.axes.indices { commands[i] = rig.axes[i].command(forPosition: frame[i]) }
        try? output.write(commands, sent: &sent)
    }
}
