import Foundation
import Logging
import RigCore
import RigPCA9685
import RigRuntime
import RigTestSupport
import Synchronization

/// A model chip, a manual clock, a captured log and the output under test, wired together.
final class TestRig {
    let log = EventLog()
    let model: PCA9685Model
    let clock: RecordingClock
    let logs = CapturedLogs()
    let output: PCA9685Output
    let channels: [OutputChannel]

    init(
        frequencyHz: Double = 50, oscillatorHz: Double = 25_000_000, phaseStagger: Bool = false,
        channels: [Int] = [0, 1], kinds: [AxisKind]? = nil, stateDirectory: String? = nil,
        retryPolicy: I2CRetryPolicy = .default, model: PCA9685Model? = nil
    ) {
        self.model = model ?? PCA9685Model(log: log)
        clock = RecordingClock(log: self.model.log)
        var config = PCA9685OutputConfig()
        config.bus = self.model.path
        config.frequencyHz = frequencyHz
        config.oscillatorHz = oscillatorHz
        config.phaseStagger = phaseStagger
        output = PCA9685Output(
            config: config, bus: self.model, stateDirectory: stateDirectory,
            logger: logs.logger, clock: clock, retryPolicy: retryPolicy)
        self.channels = channels.enumerated().map { index, channel in
            OutputChannel(axisName: "axis\(index)", channel: channel, kind: kinds?[index] ?? .servo)
        }
    }

    var period: Double { output.periodMicroseconds }

    func start(_ initial: [ChannelCommand]? = nil) throws {
        try output.start(channels: channels, initial: initial ?? channels.map { _ in .pulse(microseconds: 1500) })
    }

    /// Writes a frame; returns what `sent` reported.
    @discardableResult
    func write(_ commands: [ChannelCommand]) throws(OutputFault) -> [Double] {
        var sent = [Double](repeating: .nan, count: commands.count)
        try output.write(commands, sent: &sent)
        return sent
    }

    /// Counts the driver should program for a pulse, computed here from the datasheet.
    func expectedCounts(pulse: Double) -> Int {
        Int((pulse / period * 4096).rounded())
    }
}

/// A fresh temporary directory for one test.
func temporaryDirectory() throws -> String {
    let path = NSTemporaryDirectory() + "rig-pca9685-test-" + UUID().uuidString
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}
