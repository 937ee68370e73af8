import Foundation
import Glibc
import RigCore
import RigFormat
import RigTestSupport
import Testing

/// `rig calibrate servo` with the real binary on a pseudo-terminal and the simulated rig: a
/// "user" who reads each angle off a servo curve only the test knows (non-linear, and not the
/// file's), the table written into the rig file and nothing else changed, every pulse the
/// output sent inside the range shown, and Ctrl-C mid-move ending it with nothing saved.
@Suite struct CalibrateServoTests {
    static func hiddenAngle(pulse: Double) -> Double {
        60 * sin((pulse - 1500) / 400 * 0.9) / sin(0.9) - 2
    }

    static let rigText = """
        {
          "name": "head on the bench",
          "loopRateHz": 100,
          "axes": [
            { "name": "pan", "channel": 0, "pulseUs": [1000, 2000], "angleDeg": [-90, 90], "home": 0,
              "maxVelocity": 180, "maxAcceleration": 1000 },
            { "name": "tilt", "channel": 1, "home": 5 }
          ]
        }

        """

    /// The last status line's pulse.
    static func shownPulse(_ text: String) -> Double? {
        guard let line = text.split(separator: "\n").last(where: { $0.hasPrefix("pulse ") }) else { return nil }
        return Double(line.dropFirst(6).prefix { $0 != " " })
    }

    @Test func aHiddenCurveIsCalibratedWithinHalfADegreeAndCtrlCSavesNothing() async throws {
        let path = try RigProcess.temporaryFile("head.json", contents: Self.rigText)
        let directory = (path as NSString).deletingLastPathComponent
        let trace = directory + "/calibrate.csv"
        let rig = try TerminalProcess(["calibrate", "servo", "--rig", path, "--axis", "pan", "--trace", trace, "--no-realtime"])
        let stdout = rig.stdout
        func type(_ keys: String) async throws {
            let before = stdout.count("\npulse ")
            rig.type(keys)
            _ = try await poll(every: .milliseconds(5)) { stdout.count("\npulse ") > before ? true : nil }
        }
        _ = try await poll { stdout.text.contains("pulse 1500 µs · range 1200…1800 µs") ? true : nil }
        #expect(stdout.text.contains("nothing is sent outside the range shown"))
        // To the low end of the range (and one coarse step past it: refused), then a point every 100 µs.
        for _ in 0..<7 { try await type("\u{1B}[B") }
        #expect(Self.shownPulse(stdout.text) == 1200)
        #expect(stdout.text.contains("at the edge of the range shown (w widens it)"))
        var pulse = 1200.0
        while pulse <= 1800 {
            #expect(Self.shownPulse(stdout.text) == pulse)
            let angle = (Self.hiddenAngle(pulse: pulse) * 10).rounded() / 10
            try await type("a")
            for c in format(angle) { try await type(String(c)) }
            try await type("\r")
            if pulse < 1800 {
                try await type("\u{1B}[A")
                try await type("\u{1B}[A")
            }
            pulse += 100
        }
        rig.type("s")
        rig.process.waitUntilExit()
        #expect(rig.process.terminationStatus == 0, "\(rig.stderr.text)")
        #expect(stdout.text.contains("saved 7 points into \(path)"))
        #expect(stdout.text.contains("resolution of pan: one PCA9685 count at 50 Hz (4.88 µs"), "\(stdout.text)")

        // Only pulseUs/angleDeg became the table; within 0.5° of the truth at every pulse.
        let written = try String(contentsOfFile: path, encoding: .utf8)
        #expect(written.hasPrefix(Self.rigText.components(separatedBy: "\"pulseUs\"")[0] + "\"calibration\": [["))
        #expect(written.hasSuffix(Self.rigText.components(separatedBy: "\"angleDeg\": [-90, 90]")[1]))
        let table = try #require(try RigParser.parse(text: written, file: path).axes[0].calibration)
        #expect(table.angles.count == 7)
        let worst =
            stride(from: 1200.0, through: 1800, by: 1).map { abs(table.angle(forPulseMicroseconds: $0) - Self.hiddenAngle(pulse: $0)) }.max() ?? .infinity
        #expect(worst <= 0.5, "worst \(worst)°")
        // What the output sent: never outside the range shown.
        let rows = try Trace(path: trace).rows
        let pan = rows.filter { $0.axis == "pan" }.map(\.pulse)
        #expect(!pan.isEmpty)
        #expect(pan.allSatisfy { (1200...1800).contains($0) }, "\(pan.min() ?? 0)…\(pan.max() ?? 0)")
        // Its position_deg: the angle the file's calibration (1000–2000 µs over ±90°) gave each pulse, not the pulse.
        #expect(rows.filter { $0.axis == "pan" }.allSatisfy { abs($0.position - ($0.pulse - 1500) * 0.18) < 1e-3 })
        #expect(rows.filter { $0.axis == "tilt" }.allSatisfy { $0.pulse == rows.first { $0.axis == "tilt" }?.pulse })

        // Again, now from the new table's home pulse; Ctrl-C in the middle of a coarse move.
        let again = try TerminalProcess(["calibrate", "servo", "--rig", path, "--axis", "pan", "--trace", trace, "--no-realtime"])
        // The first "pulse …" line (the header above it also says "range").
        let start = try await poll { Self.shownPulse(again.stdout.text) }
        again.type("\u{1B}[A\u{1B}[A\u{1B}[A\u{1B}[A")
        _ = try await poll(every: .milliseconds(5)) { again.stdout.count("\npulse ") >= 5 ? true : nil }
        kill(again.process.processIdentifier, SIGINT)
        again.process.waitUntilExit()
        #expect(again.process.terminationStatus == 0, "\(again.stderr.text)")
        #expect(again.stderr.text.contains("stop requested (SIGINT)"))
        #expect(!again.stdout.text.contains("saved"))
        #expect(try String(contentsOfFile: path, encoding: .utf8) == written)
        let second = try Trace(path: trace).rows.filter { $0.axis == "pan" }.map(\.pulse)
        #expect(!second.isEmpty)
        #expect(second.allSatisfy { $0 >= start - 300 && $0 <= start + 300 })
    }

    @Test(.blocking) func refusedWithoutATerminalOrForAnUnknownAxis() throws {
        let path = try RigProcess.temporaryFile("head.json", contents: Self.rigText)
        let piped = try RigProcess.run(["calibrate", "servo", "--rig", path, "--axis", "pan"])
        #expect(piped.status == 2)
        #expect(piped.stderr.contains("run it in a terminal"))
        let unknown = try RigProcess.run(["calibrate", "servo", "--rig", path, "--axis", "roll"])
        #expect(unknown.status == 2)
        #expect(unknown.stderr.contains("no axis named \"roll\"; the axes: pan, tilt"))
    }
}
