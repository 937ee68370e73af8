import Foundation
import Glibc
import Logging
import RigCore
import RigFormat
import RigRuntime
import RigTestSupport
import Synchronization
import Testing

@testable import RigPCA9685

/// `rig calibrate servo`'s session on the PCA9685 driver and the register model: a servo
/// whose real angle ↔ pulse curve (non-linear) only the test knows, a "user" who steps it,
/// reads the angle off that curve at the pulse the chip's pin shows and types it in; the
/// table saved into the rig file, every pulse the pin ever showed inside the range shown.
@Suite struct ServoCalibrationTests {
    /// The servo's real curve: hidden from the calibrating code.
    static func hiddenAngle(pulse: Double) -> Double {
        100 * sin((pulse - 1500) / 1100 * 1.1) / sin(1.1) + 3
    }

    static let rigText = """
        {
          "name": "calibration test head",
          "output": {"type": "pca9685", "bus": "/dev/i2c-fake"},
          "axes": [
            { "name": "pan", "channel": 0, "pulseUs": [1000, 2000], "angleDeg": [-90, 90],
              "maxVelocity": 180, "maxAcceleration": 2000 },
            { "name": "tilt", "channel": 1, "idle": "release" }
          ]
        }

        """

    @Test func aHiddenCurveCalibratedWithinHalfADegreeOnTheChip() async throws {
        let directory = NSTemporaryDirectory() + "rig-calibrate-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let path = directory + "/head.json"
        try Self.rigText.write(toFile: path, atomically: true, encoding: .utf8)
        let rig = try RigParser.parse(text: Self.rigText, file: path)

        let chip = TestRig()
        let output = RecordingOutput(chip.output)
        var keys: [Int32] = [0, 0]
        #expect(pipe(&keys) == 0)
        let screen = Mutex<[String]>([])
        var options = ServoCalibrationOptions(rigPath: path, axisName: "pan")
        options.keysDescriptor = keys[0]
        options.requireTerminal = false
        options.trapSignals = false
        options.realtime = false
        options.redrawInPlace = false
        options.show = { text in screen.withLock { $0.append(text) } }

        let logger = chip.logs.logger
        let settings = options
        // The session blocks: on a thread of its own, never the pool's (two tests blocking the
        // pool's threads starve every async test of the run).
        let session = Task { () async throws -> Result<ServoCalibrationSummary, ServoCalibrationError> in
            try await onThread { () -> Result<ServoCalibrationSummary, ServoCalibrationError> in
                do throws(ServoCalibrationError) {
                    return .success(try runServoCalibration(rig: rig, output: output, options: settings, logger: logger))
                } catch {
                    return .failure(error)
                }
            }
        }
        let period = chip.period
        func type(_ text: String) async throws {
            let before = screen.withLock { $0.count }
            _ = text.withCString { write(keys[1], $0, strlen($0)) }
            _ = try await poll(every: .milliseconds(5)) { screen.withLock { $0.count } > before ? true : nil }
        }
        /// The pulse on the pin once it reached the target (within half a count).
        func settled(at target: Double) async throws -> Double {
            try await poll(every: .milliseconds(10)) {
                guard let last = output.sentByChannel.withLock({ $0.first?.last }), abs(last - target) <= period / 4096 / 2 + 1e-9 else { return nil }
                return last
            }
        }
        _ = try await poll(every: .milliseconds(5)) { screen.withLock { $0.contains { $0.hasPrefix("pulse 1500 µs · range 1200…1800 µs") } } ? true : nil }
        // Widen to 900…2100 µs, go to its low end, then up in 100 µs steps, a point each.
        for _ in 0..<3 { try await type("w") }
        for _ in 0..<12 { try await type("\u{1B}[B") }
        var target = 900.0
        while target <= 2100 {
            let pin = try await settled(at: target)
            let angle = (Self.hiddenAngle(pulse: pin) * 10).rounded() / 10
            try await type("a")
            for c in format(angle) { try await type(String(c)) }
            try await type("\r")
            if target < 2100 {
                try await type("\u{1B}[A")
                try await type("\u{1B}[A")
            }
            target += 100
        }
        try await type("s")
        let summary = try await session.value.get()
        close(keys[1])
        close(keys[0])

        let table = try #require(summary.saved)
        #expect(table.angles.count == 13)
        var worst = 0.0
        for pulse in stride(from: 900.0, through: 2100, by: 1) {
            worst = max(worst, abs(table.angle(forPulseMicroseconds: pulse) - Self.hiddenAngle(pulse: pulse)))
        }
        #expect(worst <= 0.5, "worst error \(worst)°")
        // The file: only pulseUs/angleDeg became the table, and it reads back as saved.
        let written = try String(contentsOfFile: path, encoding: .utf8)
        let before = Self.rigText.components(separatedBy: "\"pulseUs\"")
        let after = Self.rigText.components(separatedBy: "\"angleDeg\": [-90, 90]")
        #expect(written.hasPrefix(before[0] + "\"calibration\": [["))
        #expect(written.hasSuffix(after[1]))
        #expect(try RigParser.parse(text: written, file: path).axes[0].calibration == table)
        // Every pulse the pin showed: inside the widest range shown (900…2100 µs).
        #expect(summary.shownRanges.map { "\(format($0.lowerBound))…\(format($0.upperBound))" } == ["1200…1800", "1100…1900", "1000…2000", "900…2100"])
        let counts = chip.model.highCountsAfterWrites.map { $0[0] }.filter { $0 != 0 }
        let pulses = counts.map { Double($0) * period / 4096 }
        #expect(!pulses.isEmpty)
        #expect(pulses.allSatisfy { $0 >= 900 - period / 4096 && $0 <= 2100 + period / 4096 }, "\(pulses.min() ?? 0)…\(pulses.max() ?? 0)")
        // The safe state: pan holds its last pulse, tilt (release) is off.
        #expect(abs(Double(chip.model.highCounts(0)) * period / 4096 - 2100) <= period / 4096)
        #expect(chip.model.highCounts(1) == 0)
        #expect(output.safe.count == 2)
        #expect(chip.model.violations.isEmpty)
    }
}
