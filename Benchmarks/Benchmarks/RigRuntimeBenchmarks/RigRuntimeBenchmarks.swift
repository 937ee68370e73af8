import Benchmark
import RigCore
import RigRuntime

/// The whole loop body, tick after tick, on the path every command runs: the program host
/// (player, its command source's limiter), the mailbox, the loop's limiter, channel
/// commands, the simulated output, the live-view status. On a manual clock (no sleeping) and without real-time
/// settings, so only the loop's own work is measured.
///
/// `run()` allocates twice per call, outside its tick loop: the lateness histogram before
/// the first tick and the safe-state commands after the last. The two runs, of 1,000 and
/// of 10,000 ticks, must allocate exactly as often. Thresholds/*.p90.json hold that count; a tick that allocates shows up as a
/// run of 10,000 ticks allocating more, and fails `swift package benchmark thresholds check`.
let benchmarks: @Sendable () -> Void = {
    let calibration = try? Calibration.make(points: [(-90, 500), (90, 2500)], inverted: false).get()
    let rig = Rig(name: "bench pan/tilt", axes: ["pan", "tilt"].enumerated().map { i, name in
        Axis(name: name, kind: .servo, channel: i, calibration: calibration, home: 0, park: nil,
             softMin: -85, softMax: 85, maxVelocity: 90, maxAcceleration: 180, idle: .hold)
    }, output: .sim, loopRateHz: 200)

    // What the harness itself allocates between an explicit startMeasurement() and
    // stopMeasurement() with nothing in between: 0 with these metrics. (Adding .cpuTotal
    // makes it 16: the harness reads /proc for it inside the measured region, so the
    // malloc-counted benchmarks leave CPU time out.)
    Benchmark("Harness: explicit start and stop, nothing measured",
              configuration: .init(metrics: [.wallClock, .throughput, .mallocCountTotal], maxDuration: .seconds(1), maxIterations: 200)) { benchmark in
        benchmark.startMeasurement()
        benchmark.stopMeasurement()
    }

    for ticks in [1_000, 10_000] {
        let seconds = Double(ticks) / rig.loopRateHz
        // Smooth ±30° swings, rest to rest, with room under every limit.
        let keys = stride(from: 0.0, through: seconds, by: 2).enumerated().map { i, t in
            Keyframe(time: t, value: i == 0 ? 0 : (i % 2 == 1 ? 30 : -30))
        }
        let track = AxisTrack(keys: keys)
        let motion = Motion.continuous(tracks: [track, track], durationSeconds: seconds)
        Benchmark("ControlLoop.run \(ticks) ticks 2 axes",
                  configuration: .init(metrics: [.wallClock, .mallocCountTotal], timeUnits: .microseconds,
                                       maxDuration: .seconds(2), maxIterations: 200,
                                       thresholds: [.mallocCountTotal: .init(absolute: [.p90: 0])])) { benchmark in
            let output = SimOutput(config: SimOutputConfig(), rig: rig)
            let initial = rig.axes.map { $0.command(forPosition: $0.home) }
            do { try output.start(channels: rig.axes.map(OutputChannel.init), initial: initial) } catch {
                benchmark.error("the simulated output did not start: \(error)")
                return
            }
            // The program host, as `rig play` and `rig serve` run a program (its command
            // source limits every frame), with a jog waiting in the mailbox (dropped while
            // the program plays, as the server's are).
            let program = HostedProgram(name: "bench", motion: motion, trigger: .auto)
            let mailbox = SourceMailbox()
            // Made in place: a second reference to the host's arrays would make the first
            // tick's writes copy them (as the session moves its source into the loop).
            let loop = ControlLoop(rig: rig, source: ProgramHost(rig: rig, startPose: rig.homePose, program: program, endsWithProgram: true), output: output,
                                   clock: ManualClock(), options: LoopOptions(realtime: false), startPose: rig.homePose, mailbox: mailbox)
            mailbox.post(.motion(.jog(velocityFractions: [0.5, 0])))
            benchmark.startMeasurement()
            let result = loop.run()
            benchmark.stopMeasurement()
            if result.fault != nil || result.ticks < ticks {
                benchmark.error("the loop ran \(result.ticks) ticks, fault: \(result.fault.map { "\($0)" } ?? "none")")
            }
            blackHole(result)
        }
    }
}
