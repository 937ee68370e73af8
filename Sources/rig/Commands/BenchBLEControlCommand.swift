import ArgumentParser
import RigBLEControl
import RigCore

/// `rig bench blecontrol`: the coalescing scheduler against the stock BLEControl strategy
/// (every servo re-sent on every change through an unbounded queue, 20 ms per send), on
/// the same program, deterministically: bytes/s, writes/s, tracking error and latency.
struct BenchBLEControlCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "blecontrol",
        abstract: "Compare rig's coalesced BLEControl stream with the stock library's strategy on a program."
    )

    @Argument(help: "A program file (default rigs/move.json).")
    var file: String = "rigs/move.json"

    @Option(help: "The link budget in bytes per second (the board's 9600 baud UART: 960).")
    var linkBytesPerSecond: Double = 960

    @Option(help: "Loop rates to compare at, comma-separated.")
    var rates: String = "50,100"

    @Flag(help: "Print the figures as JSON: one object per rate in a list.")
    var json = false

    func run() throws {
        var program = try FileLoading.loadProgram(file)
        var objects: [String] = []
        defer { if json { print("[" + objects.joined(separator: ", ") + "]") } }
        for text in rates.split(separator: ",") {
            guard let rate = Double(text), Rig.loopRateRangeHz.contains(rate) else {
                throw ValidationError("--rates: \(text) is not a loop rate in 20…500 Hz")
            }
            program.rig.loopRateHz = rate
            let report = BLEControlComparison.run(
                rig: program.rig, motion: program.motion, startPose: program.rig.homePose,
                linkBytesPerSecond: linkBytesPerSecond)
            if json {
                objects.append(
                    "{\"rate_hz\": \(number(rate)), \"seconds\": \(number(report.durationSeconds)), \"link_bytes_per_second\": \(number(linkBytesPerSecond)), "
                        + "\"coalesced\": \(report.coalesced.json(tickHz: rate)), \"stock\": \(report.stock.json(tickHz: rate))}")
                continue
            }
            print(report.summary)
            print("")
        }
    }
}

extension BLEControlComparison.Figures {
    /// The figures as a JSON object (times in ms, errors in µs, ages also in ticks).
    func json(tickHz: Double) -> String {
        "{\"bytes\": \(totalBytes), \"bytes_per_second\": \(number(bytesPerSecond)), \"max_bytes_in_1s\": \(maxBytesInOneSecond), "
            + "\"writes_per_second\": \(number(writesPerSecond)), \"tracking_error_us\": {\"rms\": \(number(rmsTrackingErrorMicroseconds)), "
            + "\"mean\": \(number(meanTrackingErrorMicroseconds)), \"max\": \(number(maxTrackingErrorMicroseconds))}, "
            + "\"latency_ms\": {\"mean\": \(number(meanLatencySeconds * 1000)), \"max\": \(number(maxLatencySeconds * 1000))}, "
            + "\"value_age_ms\": {\"p50\": \(number(valueAgeP50Seconds * 1000)), \"p99\": \(number(valueAgeP99Seconds * 1000)), "
            + "\"p99_first_quarter\": \(number(valueAgeP99FirstQuarterSeconds * 1000)), \"p99_last_quarter\": \(number(valueAgeP99LastQuarterSeconds * 1000))}, "
            + "\"value_age_p99_ticks\": \(number(valueAgeP99Seconds * tickHz)), \"drain_s\": \(number(drainSeconds))}"
    }
}
