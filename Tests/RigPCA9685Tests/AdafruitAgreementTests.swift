import Foundation
import RigCore
import RigTestSupport
import Testing

@testable import RigPCA9685

/// rig's driver against Adafruit's (adafruit-circuitpython-pca9685 with
/// adafruit-circuitpython-motor's Servo), run on a fake bus by `adafruit_reference.py`.
/// Needs python3 and those packages; without them this suite fails and says how to
/// install them.
@Suite("Agreement with Adafruit's PCA9685 driver") struct AdafruitAgreementTests {
    static let installHint =
        "Install the test dependencies: \(TestTools.setupHint); they include adafruit-circuitpython-pca9685 "
        + "and adafruit-circuitpython-motor (see docs/pca9685.md, \"Tests\")."

    struct Reference: Decodable {
        struct Registers: Decodable {
            var pulseUs: Double?
            var percent: Double?
            var on: Int
            var off: Int
            /// High ticks as the chip produces them (full off → 0).
            var counts: Int { off & 0x1000 != 0 ? 0 : on & 0x1000 != 0 ? 4096 : (off - on + 4096) % 4096 }
        }
        var oscillatorHz: Double
        var frequencyHz: Double
        var prescale: Int
        var pulses: [Registers]
        var duties: [Registers]
    }

    struct BusBytes: Decodable {
        var transactions: Int
        var busBytes: Int
    }

    static func runScript(_ arguments: [String] = []) throws -> Data {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("adafruit_reference.py")
        let process = TestTools.process("python3", [script.path] + arguments)
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        do { try process.run() } catch {
            throw ReferenceUnavailable(message: "could not run python3 (\(error)). \(installHint)")
        }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw ReferenceUnavailable(message: "adafruit_reference.py failed (exit \(process.terminationStatus)): \(stderr) \(installHint)")
        }
        return data
    }

    struct ReferenceUnavailable: Error, CustomStringConvertible {
        var message: String
        var description: String { message }
    }

    @Test func prescaleAndCountsAreEqualOrCloserToExact() throws {
        let references = try JSONDecoder().decode([Reference].self, from: Self.runScript())
        #expect(references.count == 8)
        var equal = 0
        var closer = 0
        for reference in references {
            let osc = reference.oscillatorHz
            let f = reference.frequencyHz
            let ours = PCA9685Math.prescale(frequencyHz: f, oscillatorHz: osc)
            let oursError = abs(PCA9685Math.frequencyHz(prescale: ours, oscillatorHz: osc) - f)
            let theirsError = abs(PCA9685Math.frequencyHz(prescale: UInt8(reference.prescale), oscillatorHz: osc) - f)
            #expect(Int(ours) == reference.prescale || oursError < theirsError, "prescale at \(f) Hz, \(osc) Hz")

            // Pulse widths: what each driver's registers really produce, against the request.
            let ourPeriod = PCA9685Math.periodMicroseconds(prescale: ours, oscillatorHz: osc)
            let theirPeriod = PCA9685Math.periodMicroseconds(prescale: UInt8(reference.prescale), oscillatorHz: osc)
            let rig = TestRig(frequencyHz: f, oscillatorHz: osc, channels: [0])
            try rig.start([.off])
            for theirs in reference.pulses {
                let pulse = try #require(theirs.pulseUs)
                let sent = try rig.write([.pulse(microseconds: pulse)])[0]
                let ourCounts = rig.model.highCounts(0)
                #expect(abs(sent - PCA9685Math.pulseMicroseconds(counts: ourCounts, periodMicroseconds: ourPeriod)) < 1e-9)
                let ourError = abs(Double(ourCounts) * ourPeriod / 4096 - pulse)
                let theirError = abs(Double(theirs.counts) * theirPeriod / 4096 - pulse)
                if ourCounts == theirs.counts {
                    equal += 1
                } else if ourError < theirError {
                    closer += 1
                } else {
                    Issue.record(
                        "\(pulse) µs at \(f) Hz, \(osc) Hz: ours \(ourCounts) counts (error \(ourError) µs), Adafruit \(theirs.counts) (error \(theirError) µs)"
                    )
                }
            }
            for theirs in reference.duties {
                let percent = try #require(theirs.percent)
                let ourCounts = PCA9685Math.counts(dutyPercent: percent)
                let exact = percent / 100 * 4096
                #expect(
                    ourCounts == theirs.counts || abs(Double(ourCounts) - exact) < abs(Double(theirs.counts) - exact),
                    "\(percent) %: ours \(ourCounts), Adafruit \(theirs.counts)")
            }
        }
        #expect(equal + closer > 0)
    }

    @Test func fewerBusBytesThanAdafruitForAFullFrame() throws {
        // 16 servos all moving every frame: Adafruit writes each channel on its own.
        let theirs = try JSONDecoder().decode(BusBytes.self, from: Self.runScript(["bus-bytes", "50", "16", "100"]))
        let rig = TestRig(channels: Array(0..<16))
        try rig.start(Array(repeating: .pulse(microseconds: 1500), count: 16))
        rig.log.clear()
        for frame in 0..<100 {
            try rig.write((0..<16).map { .pulse(microseconds: 1000 + Double((frame + $0) % 100) * 10) })
        }
        #expect(theirs.busBytes == 100 * 16 * 6)
        // Every channel's OFF changes by 10 µs steps; its ON stays: per frame at most the
        // 16 OFF pairs and the ON bytes between them, in two 32-byte bursts at worst.
        #expect(rig.log.busBytes <= 100 * 2 * (2 + 32))
        #expect(rig.log.busBytes < theirs.busBytes)
    }
}
