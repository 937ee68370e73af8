import Foundation
import Logging
import RigCore
import RigDBus
import RigRuntime
import RigTestSupport
import Synchronization
import Testing

@testable import RigBLEControl

/// Tier 2: the output against the Python test board through bluezoo on a private bus.
/// Each has a time limit, so a hung emulator fails the test instead of the run.
@Suite(.serialized, .timeLimit(.minutes(4)))
struct BoardTests {
    /// Pan (released at the end) and tilt (held), pulses mapped into 1000–2000 µs.
    /// The board's output config: the harness's central adapter.
    static var config: BLEControlOutputConfig {
        var config = BLEControlOutputConfig()
        config.adapter = BoardHarness.centralAdapter
        config.connectTimeoutSeconds = 90  // a deadline, not a wait: under load (stress-ng, a build beside) the scan and connect took over 20 s
        return config
    }

    static func rig(loopRateHz: Double = 50) -> Rig {
        let calibration = try! Calibration.make(points: [(-90, 1000), (90, 2000)], inverted: false).get()
        return Rig(
            name: "ble",
            axes: [
                Axis(
                    name: "pan", kind: .servo, channel: 0, calibration: calibration, home: 0, park: nil,
                    softMin: -80, softMax: 80, maxVelocity: 90, maxAcceleration: 360, idle: .release),
                Axis(
                    name: "tilt", kind: .servo, channel: 1, calibration: calibration, home: 0, park: nil,
                    softMin: -80, softMax: 80, maxVelocity: 90, maxAcceleration: 360, idle: .hold),
            ], output: OutputConfig(type: BLEControlOutputConfig.type), loopRateHz: loopRateHz)
    }

    static func motion(seconds: Double) -> Motion {
        .continuous(
            tracks: [
                AxisTrack(keys: [Keyframe(time: 0, value: 0), Keyframe(time: seconds * 0.6, value: 60), Keyframe(time: seconds, value: 30)]),
                AxisTrack(keys: [Keyframe(time: 0, value: 0), Keyframe(time: seconds, value: -40)]),
            ], durationSeconds: seconds)
    }

    func makeOutput(_ harness: BoardHarness, rig: Rig, logs: CapturedLogs) -> BLEControlOutput {
        BLEControlOutput(
            config: Self.config, logger: logs.logger, bus: .address(harness.bus.address),
            stateDirectory: harness.stateDirectory)
    }

    /// The example rig's BLEControl output on the harness's board (wrapped by `wrap`),
    /// started — connected, INIT, enables — and a loop ready to play a `seconds` move.
    func started<O: Output & Sendable>(_ harness: BoardHarness, seconds: Double, wrap: (BLEControlOutput) -> O) async throws
        -> (logs: CapturedLogs, ble: BLEControlOutput, output: O, loop: ControlLoop<Player>)
    {
        let logs = CapturedLogs()
        let rig = Self.rig()
        let ble = makeOutput(harness, rig: rig, logs: logs)
        let output = wrap(ble)
        let start = rig.homePose
        let loop = ControlLoop(
            rig: rig, source: Player(rig: rig, motion: Self.motion(seconds: seconds), startPose: start),
            output: output, options: LoopOptions(realtime: false), startPose: start)
        try await onThread {
            try output.start(
                channels: rig.axes.map(OutputChannel.init),
                initial: rig.axes.indices.map { rig.axes[$0].command(forPosition: start[$0]) })
        }
        return (logs, ble, output, loop)
    }

    /// The values each channel got, in order, from the board's decoded log (after `since`).
    func boardValues(_ commands: [BoardHarness.Entry], channel: Int) -> [Double] {
        commands.filter { $0.name == "SERVO_VAL" && $0.channel == channel }.compactMap { $0.value.map { 1000 + Double($0) } }
    }

    /// The board's values are the sent values in order, with at most the commands of the
    /// dropped writes missing (4 per write), plus at most the safe-state value at the end.
    func expectBoardGot(_ board: [Double], sent: [Double], dropped: Int, sourceLocation: Testing.SourceLocation = #_sourceLocation) {
        var matched = 0
        var next = 0
        for value in board {
            guard let found = sent[next...].firstIndex(of: value) else { break }
            matched += 1
            next = found + 1
        }
        #expect(matched >= board.count - 1, "the board got values never reported as sent", sourceLocation: sourceLocation)
        #expect(
            sent.count - matched <= 4 * dropped, "sent values the board never got: \(sent.count - matched), dropped writes \(dropped)",
            sourceLocation: sourceLocation)
    }

    @Test func playsAProgramInitEnablesThenValuesWithinTheBudget() async throws {
        let harness = try await BoardHarness(boardArguments: ["--reply-unknown-once"])
        defer { harness.stop() }
        let (logs, ble, output, loop) = try await started(harness, seconds: 3, wrap: RecordingOutput.init)
        #expect(ble.linkState.isReady)
        // The board's FF reply comes back over D-Bus on the link's own thread; a loaded
        // machine may deliver it after the program's last frame. The link stays up until it
        // came (bounded): a reply after the shutdown is, rightly, never heard.
        let warnedBeforeShutdown = Mutex(false)
        output.beforeShutdown = {
            let warned = pollBlocking { logs.all.contains { $0.hasPrefix("warning") && $0.contains("SERVO_VAL") } ? true : nil }
            warnedBeforeShutdown.withLock { $0 = warned == true }
        }
        let result = try await onThread { loop.run() }
        #expect(result.fault == nil)

        let commands = harness.commands()
        #expect(harness.violations() == [])
        // INIT alone, acknowledged; then both enables, acknowledged; then values.
        let names = commands.map { $0.name ?? "" }
        #expect(names.first == "INIT")
        #expect(commands.first?.via == "request")
        let enables = commands.prefix(3).dropFirst()
        #expect(enables.map(\.name) == ["ANALOG_OUT_EN", "ANALOG_OUT_EN"])
        #expect(Set(enables.compactMap(\.channel)) == [0, 1] && enables.allSatisfy { $0.enable == 1 && $0.via == "request" })
        let values = commands.dropFirst(3).filter { $0.name == "SERVO_VAL" }
        #expect(values.count > 20)
        #expect(values.allSatisfy { $0.via == "fd" })  // streamed over the AcquireWrite socket
        // What the board decoded is what the output reported as sent, channel by channel, in
        // order; only writes the sender dropped (counted) may be missing.
        let sent = output.sentByChannel.withLock { $0 }
        expectBoardGot(boardValues(commands, channel: 0), sent: sent[0], dropped: ble.counters.droppedWrites)
        expectBoardGot(boardValues(commands, channel: 1), sent: sent[1], dropped: ble.counters.droppedWrites)
        // …and follows the program: pan ends at 30° = 1666.7 µs, tilt at −40° = 1277.8 µs.
        #expect(abs((sent[0].last ?? 0) - 1667) <= 1)
        #expect(abs((sent[1].last ?? 0) - 1278) <= 1)
        // No write over 20 bytes (also a board violation); the budget held per the rig's ledger.
        let writes = harness.entries().filter { $0.event == "write" }
        #expect(writes.allSatisfy { ($0.bytes?.count ?? 0) <= 20 })
        #expect(ble.traffic.maxBytes(inWindowOfSeconds: 1) <= 960 + 20)
        #expect(ble.traffic.ticks.allSatisfy { $0.largestWrite <= 20 })
        let streamed = writes.filter { $0.via == "fd" }.reduce(0) { $0 + ($1.bytes?.count ?? 0) }
        #expect(streamed <= ble.traffic.totalBytes + 20)  // + the shutdown's safe-state write
        // Shutdown: pan (release) disabled, tilt (hold) keeps its last pulse.
        let tail = commands.suffix(2)
        #expect(tail.contains { $0.name == "ANALOG_OUT_EN" && $0.channel == 0 && $0.enable == 0 })
        #expect(tail.contains { $0.name == "SERVO_VAL" && $0.channel == 1 && $0.value == Int((sent[1].last ?? 0) - 1000) })
        // The board's FF reply became a warning naming the command.
        #expect(warnedBeforeShutdown.withLock { $0 }, "\(logs.all.suffix(20))")
        // The board is remembered for next time.
        let memory = BLEControlBoardMemory(directory: harness.stateDirectory, adapter: BoardHarness.centralAdapter)
        #expect(memory.load()?.address == BoardHarness.boardAddress)
    }

    @Test func reconnectsAfterTheLinkDropsAndSendsTheCurrentPose() async throws {
        let harness = try await BoardHarness()
        defer { harness.stop() }
        let (logs, ble, output, loop) = try await started(harness, seconds: 8, wrap: RecordingOutput.init)
        loop.start()
        // Let some values stream, then drop the link.
        _ = try await poll { harness.commands().filter { $0.name == "SERVO_VAL" }.count >= 20 ? true : nil }
        trace("test: dropping the link")
        try await harness.restartEmulatorAndBoard()
        trace("test: board back")
        // The output notices, reconnects, and INITs again; the timeline kept running.
        do {
            _ = try await poll(for: .seconds(20)) { harness.commands().filter { $0.name == "INIT" }.count >= 2 ? true : nil }
        } catch {
            trace("test: no second INIT; the output logged:\n" + logs.all.joined(separator: "\n"))
            loop.mailbox.requestAbort()
            _ = try await onThread { loop.wait() }
            throw error
        }
        _ = try await poll(for: .seconds(20)) { () -> Bool? in
            let commands = harness.commands()
            guard let second = commands.lastIndex(where: { $0.name == "INIT" }) else { return nil }
            return commands[second...].filter { $0.name == "SERVO_VAL" }.count >= 2 ? true : nil
        }
        trace("test: reconnected")
        let result = try await onThread { loop.wait() }
        #expect(result.fault == nil)

        #expect(harness.violations() == [])
        let commands = harness.commands()
        let inits = commands.indices.filter { commands[$0].name == "INIT" }
        #expect(inits.count == 2)
        if inits.count == 2 {
            let after = commands[(inits[1] + 1)...]
            let enables = after.prefix(2)
            #expect(enables.allSatisfy { $0.name == "ANALOG_OUT_EN" && $0.enable == 1 })
            #expect(Set(enables.compactMap(\.channel)) == [0, 1])
            // Both channels are sent again at once (the board forgot them), with values the
            // output reported as sent then: the current pose, not a stale target.
            let firstValues = after.dropFirst(2).prefix(2)
            #expect(Set(firstValues.compactMap(\.channel)) == [0, 1])
        }
        let sent = output.sentByChannel.withLock { $0 }
        expectBoardGot(boardValues(commands, channel: 0), sent: sent[0], dropped: ble.counters.droppedWrites)
        expectBoardGot(boardValues(commands, channel: 1), sent: sent[1], dropped: ble.counters.droppedWrites)
        #expect(logs.all.contains { $0.contains("reconnecting") })
        #expect(ble.traffic.maxBytes(inWindowOfSeconds: 1) <= 960 + 20)
    }

    @Test func theNextRunStartsWhereTheLastOneLeftTheBoardWithoutAJump() async throws {
        let harness = try await BoardHarness()
        defer { harness.stop() }
        let (_, _, _, loop) = try await started(harness, seconds: 3, wrap: { $0 })
        #expect(try await onThread { loop.run() }.fault == nil)
        // The move ended at pan 30°, tilt −40° (pan then went limp: the last position is kept).
        let rig = Self.rig()
        let second = makeOutput(harness, rig: rig, logs: CapturedLogs())
        let start = StartPose.resolve(rig: rig, output: second)
        #expect(start.restoredAxes == ["pan", "tilt"])
        #expect(abs(start.pose[0] - 30) < 0.5 && abs(start.pose[1] + 40) < 0.5, "\(start.pose)")
        // What the output remembered is what the board got last, to its 1 µs resolution
        // (a second run starts its output at that pose: `RigSession` sends the start pose first).
        let commands = harness.commands()
        for (channel, angle) in [(0, start.pose[0]), (1, start.pose[1])] {
            let last = try #require(boardValues(commands, channel: channel).last)
            #expect(abs(last - (1500 + angle / 180 * 1000)) <= 1)
        }
    }

    @Test func fallsBackToWriteValueWithoutAcquireWrite() async throws {
        let harness = try await BoardHarness(boardArguments: ["--no-acquire"])
        defer { harness.stop() }
        let (_, ble, _, loop) = try await started(harness, seconds: 3, wrap: { $0 })
        ble.showText(line1: "step 1 of 3", line2: "Prêt")
        let result = try await onThread { loop.run() }
        #expect(result.fault == nil)
        #expect(harness.violations() == [])
        let commands = harness.commands()
        #expect(commands.first?.name == "INIT" && commands.first?.via == "request")
        let values = commands.filter { $0.name == "SERVO_VAL" }
        #expect(values.count > 5)
        #expect(values.dropLast().allSatisfy { $0.via == "command" })  // the last is the safe state, acknowledged
        // Two lines, two LCD_TEXT; a write dropped on a loaded machine (stale or EAGAIN)
        // makes the scheduler resend everything, the text included, once more each time.
        let lcd = commands.filter { $0.name == "LCD_TEXT" }
        let dropped = ble.counters.droppedWrites
        #expect(lcd.count >= 2 && lcd.count <= 2 + 2 * dropped, "\(lcd.count) LCD_TEXT with \(dropped) writes dropped")
    }

    @Test func startFailsClearlyWhenNoBoardAnswers() async throws {
        let harness = try await BoardHarness()
        defer { harness.stop() }
        var config = BLEControlOutputConfig()
        config.adapter = BoardHarness.centralAdapter
        config.address = "AA:BB:CC:DD:EE:FF"
        config.connectTimeoutSeconds = 2
        let output = BLEControlOutput(
            config: config, logger: Logger(label: "test"), bus: .address(harness.bus.address),
            stateDirectory: nil)
        let message = try await onThread { () -> String in
            do {
                try output.start(channels: [.init(axisName: "pan", channel: 0, kind: .servo)], initial: [.pulse(microseconds: 1500)])
                return ""
            } catch {
                return "\(error)"
            }
        }
        #expect(message.contains("hci0") && message.contains("AA:BB:CC:DD:EE:FF") && message.contains("FFE0"))
        let missing = BLEControlOutput(
            config: {
                var c = config
                c.adapter = "hci7"
                return c
            }(), logger: Logger(label: "test"),
            bus: .address(harness.bus.address), stateDirectory: nil)
        let noAdapter = try await onThread { () -> String in
            do {
                try missing.start(channels: [.init(axisName: "pan", channel: 0, kind: .servo)], initial: [.pulse(microseconds: 1500)])
                return ""
            } catch {
                return "\(error)"
            }
        }
        #expect(noAdapter.contains("hci7") && noAdapter.contains("hci0"))
    }
}
