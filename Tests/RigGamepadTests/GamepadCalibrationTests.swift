import CLinux
import Foundation
import Glibc
import RigCore
import RigFormat
import RigGamepad
import RigRuntime
import RigTestSupport
import Synchronization
import Testing

/// `rig calibrate servo` driven by a gamepad: recorded evdev bytes through a FIFO to the real
/// `GamepadService` and reader (the ioctls faked), on the simulated rig; the terminal's keys
/// stay open and silent. The d-pad, the stick, the shoulders, A with `--angles`, B and
/// Start do the calibration; the saved table is what the pad did.
@Suite struct GamepadCalibrationTests {
    static let rigText = """
        {
          "name": "pad calibration",
          "loopRateHz": 100,
          "axes": [
            { "name": "pan", "channel": 0, "pulseUs": [1000, 2000], "angleDeg": [-90, 90],
              "maxVelocity": 180, "maxAcceleration": 1000 }
          ]
        }

        """

    @Test func thePadStepsRecordsTheListedAnglesDeletesAndSaves() async throws {
        let directory = NSTemporaryDirectory() + "rig-padcal-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let path = directory + "/head.json"
        try Self.rigText.write(toFile: path, atomically: true, encoding: .utf8)
        let rig = try RigParser.parse(text: Self.rigText, file: path)
        let node = directory + "/event0"
        #expect(mkfifo(node, 0o600) == 0)
        // Held open for writing (and reading) first, so the reader never sees an end of file.
        let pad = open(node, O_RDWR | O_NONBLOCK)
        #expect(pad >= 0)
        defer { close(pad) }
        var keys: [Int32] = [0, 0]
        #expect(pipe(&keys) == 0)
        defer {
            close(keys[0])
            close(keys[1])
        }

        let logs = CapturedLogs()
        let gamepad = GamepadCalibrationKeys(
            finder: GamepadFinder(directory: directory, control: FakeEvdevControl(), device: node), config: JogConfig.of(rig), angles: [-30, 0, 30],
            logger: logs.logger)
        let screen = Mutex<[String]>([])
        var options = ServoCalibrationOptions(rigPath: path, axisName: "pan")
        options.keysDescriptor = keys[0]
        options.requireTerminal = false
        options.trapSignals = false
        options.realtime = false
        options.redrawInPlace = false
        options.moreKeys = gamepad
        options.show = { text in screen.withLock { $0.append(text) } }
        let settings = options
        let output = SimOutput(config: SimOutputConfig(), rig: rig)
        // The session blocks: on a thread of its own, never the pool's (two tests blocking the
        // pool's threads starve every async test of the run).
        let session = Task { () async throws -> Result<ServoCalibrationSummary, ServoCalibrationError> in
            try await onThread { () -> Result<ServoCalibrationSummary, ServoCalibrationError> in
                do throws(ServoCalibrationError) {
                    return .success(try runServoCalibration(rig: rig, output: output, options: settings, logger: logs.logger))
                } catch {
                    return .failure(error)
                }
            }
        }
        @Sendable func status() -> String { screen.withLock { $0.last { $0.hasPrefix("pulse ") } } ?? "" }
        @Sendable func pulse() -> Double? { Double(status().dropFirst(6).prefix { $0 != " " }) }
        func send(_ build: (inout EventStream) -> Void) {
            var stream = EventStream()
            build(&stream)
            let bytes = stream.take()
            #expect(bytes.withUnsafeBytes { write(pad, $0.baseAddress, $0.count) } == bytes.count)
        }
        /// A press and release of the d-pad on the hat (-1: up/left).
        func hat(_ code: Int32, _ direction: Int32) {
            send {
                $0.abs(code, direction)
                $0.report()
                $0.abs(code, 0)
                $0.report()
            }
        }
        func button(_ code: Int32) { send { $0.tap(code) } }
        func waitFor(_ what: String, _ check: @escaping @Sendable () -> Bool) async throws {
            do { _ = try await poll(every: .milliseconds(5)) { check() ? true : nil } } catch {
                Issue.record("waiting for \(what): the screen \(screen.withLock { $0.suffix(5) }), the log \(logs.all.suffix(5))")
                throw error
            }
        }

        // The pad was found and its keys are on screen.
        try await waitFor("the pad") { logs.all.contains { $0.contains("gamepad: Fake Gamepad") } }
        #expect(screen.withLock { $0.contains { $0.contains("gamepad: d-pad") && $0.contains("-30°, 0°, 30°") } })
        // D-pad down 4 × 50 µs: 1300; A records −30°.
        for _ in 0..<4 { hat(Int32(ABS_HAT0Y), 1) }
        try await waitFor("1300") { pulse() == 1300 }
        #expect(status().contains("A records -30°"), "\(status())")
        button(Int32(BTN_SOUTH))
        try await waitFor("one point") { status().contains("1 point") && status().contains("A records 0°") }
        // Up 4 × 50 µs and right 2 × 5 µs, left 2 × 5 µs: 1500; A records 0°.
        for _ in 0..<4 { hat(Int32(ABS_HAT0Y), -1) }
        for _ in 0..<2 { hat(Int32(ABS_HAT0X), 1) }
        try await waitFor("1510") { pulse() == 1510 }
        for _ in 0..<2 { hat(Int32(ABS_HAT0X), -1) }
        try await waitFor("1500") { pulse() == 1500 }
        button(Int32(BTN_SOUTH))
        try await waitFor("two points") { status().contains("2 points") }
        // The stick held right moves on its own until let go; then the shoulders to 1700 exactly.
        send {
            $0.abs(Int32(ABS_X), 32767)
            $0.report()
        }
        try await waitFor("past 1700") { (pulse() ?? 0) >= 1700 }
        send {
            $0.abs(Int32(ABS_X), 0)
            $0.report()
        }
        let stopped = try #require(pulse())
        #expect(stopped <= 1800)
        var at = stopped
        while at > 1700 {
            button(Int32(BTN_TL))
            let before = at
            try await waitFor("down 1 µs") { (pulse() ?? before) < before }
            at = try #require(pulse())
        }
        #expect(at == 1700)
        button(Int32(BTN_SOUTH))
        try await waitFor("three points") { status().contains("3 points") }
        // B deletes it, and A records 30° again.
        button(Int32(BTN_EAST))
        try await waitFor("two again") { status().contains("2 points") && status().contains("A records 30°") }
        button(Int32(BTN_SOUTH))
        try await waitFor("three again") { status().contains("3 points") }
        // Start saves.
        button(Int32(BTN_START))
        let summary = try await session.value.get()
        let table = try #require(summary.saved)
        #expect(table.angles == [-30, 0, 30])
        #expect(table.pulses == [1300, 1500, 1700])
        #expect(try RigParser.parse(text: try String(contentsOfFile: path, encoding: .utf8), file: path).axes[0].calibration == table)
        #expect(summary.session.exitCode == 0)
    }
}
