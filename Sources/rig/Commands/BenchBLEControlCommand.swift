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

    func run() throws {
        var program = try FileLoading.loadProgram(file)
        for text in rates.split(separator: ",") {
            guard let rate = Double(text), Rig.loopRateRangeHz.contains(rate) else {
                throw ValidationError("--rates: \(text) is not a loop rate in 20…500 Hz")
            }
            program.rig.loopRateHz = rate
            let report = BLEControlComparison.run(rig: program.rig, motion: program.motion, startPose: program.rig.homePose,
                                                  linkBytesPerSecond: linkBytesPerSecond)
            print(report.summary)
            print("")
        }
    }
}
