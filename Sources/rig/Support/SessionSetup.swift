import ArgumentParser
import Logging
import RigCore
import RigDevices
import RigFormat
import RigRuntime

/// The one preamble and epilogue of the commands that run the rig (`play`, `jog`, `serve
/// http`, `serve dfmoco`): the output built from the rig file (nothing touched yet) or
/// exit 1, the trace path checked before anything else (exit 2), where the rig starts said
/// once, and how the session ended printed the same way with its exit code.
struct SessionSetup {
    var rig: Rig
    var output: Output
    var start: StartPose.Resolved

    /// Builds the rig's output and resolves where the rig starts (announced).
    static func open(_ rig: Rig, logger: Logger) throws(ExitCode) -> SessionSetup {
        let output = try makeOutput(rig, logger: logger)
        let start = StartPose.resolve(rig: rig, output: output)
        start.announce(logger)
        return SessionSetup(rig: rig, output: output, start: start)
    }

    /// The rig's output, constructed (no hardware touched), or exit 1 saying why not.
    static func makeOutput(_ rig: Rig, logger: Logger) throws(ExitCode) -> Output {
        do { return try OutputDrivers.make(for: rig, logger: logger) } catch {
            printError("error: \(error)")
            throw ExitCode(1)
        }
    }

    /// The session's options from the command line: `--trace` checked against the run's
    /// input files now (exit 2), before anything opens or moves; the rig's measured settle's
    /// sensor constructed (`Devices.stillnessProbe`).
    static func options(_ run: SessionRunOptions, loop: LoopOptions, inputs: [String], rig: Rig) throws(ExitCode) -> SessionOptions {
        if let trace = run.trace {
            do { try OutputPath.check(trace, option: "--trace", inputs: inputs) } catch {
                printError("error: \(error)")
                throw ExitCode(2)
            }
        }
        var loop = loop
        loop.realtime = !run.noRealtime
        var options = SessionOptions(loop: loop, tracePath: run.trace)
        options.inputPaths = inputs
        do { options.stillness = try Devices.stillnessProbe(for: rig) } catch {
            printError("\(error)")
            throw ExitCode(2)
        }
        return options
    }

    /// A session that could not start: nothing moved. Prints why; the exit code to throw.
    static func refused(_ error: SessionError) -> ExitCode {
        printError("error: \(error)")
        return ExitCode(error.exitCode)
    }

    /// The loop's figures after a run: real-time grant and page faults in the log, and a
    /// "done:" line with ticks, steps settled, wake-up lateness and a trace that lost rows.
    static func report(_ summary: SessionSummary, logger: Logger) {
        let loop = summary.loop
        logger.info("real-time: \(loop.grant)")
        let faults = loop.pageFaultsAfterFirstTick
        if faults.major > 0 {
            logger.warning("the loop thread waited for storage \(faults.major) times (major page faults after the first tick)")
        }
        logger.info("loop thread page faults after the first tick: \(faults.minor) minor, \(faults.major) major")
        let lateness = loop.lateness
        func us(_ v: Double) -> String { fixed(v, 0) + " µs" }
        say(
            "done: \(loop.ticks) ticks, \(summary.stepsReady) steps settled; wake-up lateness p50 \(us(lateness.percentileMicroseconds(0.5))) p99 \(us(lateness.percentileMicroseconds(0.99))) max \(us(lateness.maxMicroseconds)), \(lateness.missedTicks) missed ticks"
        )
        if loop.traceRowsDropped > 0 {
            printError("warning: the trace lost \(loop.traceRowsDropped) rows (the disk could not keep up)")
        }
    }

    /// How the session ended: its problems printed, and its exit code thrown unless 0.
    static func end(_ summary: SessionSummary) throws(ExitCode) {
        for line in summary.problems { printError("error: \(line)") }
        if summary.exitCode != 0 { throw ExitCode(summary.exitCode) }
    }
}
