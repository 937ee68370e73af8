import Logging
import RigCore
import RigRuntime
import RigTestSupport
import Synchronization
import Testing

@testable import RigBLEControl

@Suite struct ProtocolTests {
    @Test func servoValuesAreOffsetsFromOneMillisecondClampedToTheBoardRange() {
        #expect(BLEControlCommand.servoValue(pulseMicroseconds: 1500) == (500, false))
        #expect(BLEControlCommand.servoValue(pulseMicroseconds: 1000) == (0, false))
        #expect(BLEControlCommand.servoValue(pulseMicroseconds: 2000) == (1000, false))
        #expect(BLEControlCommand.servoValue(pulseMicroseconds: 900) == (0, true))
        #expect(BLEControlCommand.servoValue(pulseMicroseconds: 2400) == (1000, true))
        #expect(BLEControlCommand.servoValue(pulseMicroseconds: .nan).clamped)
        #expect(BLEControlCommand.pwmValue(dutyPercent: 37.5) == 375)
        #expect(BLEControlCommand.pwmValue(dutyPercent: -5) == 0)
        #expect(BLEControlCommand.pwmValue(dutyPercent: 150) == 1000)
        #expect(BLEControlCommand.encodeValue(command: BLEControlCommand.servoValue, channel: 3, value: 700) == [0x02, 3, 3, 0x02, 0xBC])
        #expect(BLEControlCommand.encodeEnable(channel: 7, enabled: false) == [0x01, 2, 7, 0])
        #expect(BLEControlCommand.encodeInit() == [0x00, 0])
        #expect(BLEControlCommand.pulseMicroseconds(command: BLEControlCommand.pwmValue, value: 500) == 10_000)
    }

    @Test func lcdLinesAreFoldedToFifteenASCIIBytes() {
        // The firmware's line buffer is 16 bytes including the terminator.
        #expect(BLEControlLCDLine("Prêt à déclencher maintenant").text == "Pret a declench")
        #expect(BLEControlLCDLine("exactly 15 char").text == "exactly 15 char")
        #expect(BLEControlLCDLine("sixteen chars ok").text == "sixteen chars o")
        #expect(BLEControlLCDLine("ok").text == "ok             ")
        #expect(BLEControlLCDLine("tab\there").text == "tab here       ")
        #expect(BLEControlLCDLine("→ 日本").text == "? ??           ")
        #expect(BLEControlLCDLine("").text == BLEControlLCDLine.blank.text)
        var buffer = [UInt8](repeating: 0xAA, count: 19)
        BLEControlLCDLine("step 3 of 8").storeCommand(line: 1, into: &buffer, at: 0)
        #expect(buffer[0] == BLEControlCommand.lcdText && buffer[1] == 17 && buffer[2] == 1 && buffer[18] == 0)
        #expect(buffer[1] == UInt8(buffer.count - 2))  // the length byte counts bytes, not characters
        // Text and terminator fill the firmware's 16-byte buffer exactly.
        #expect(buffer[3...].count == 16)
        #expect(buffer[3...17].allSatisfy { $0 < 0x80 && $0 != 0 })
    }

    @Test func boardRepliesAreParsedWithoutTrapping() {
        #expect(BLEControlReply.parse([0xFF, 0x01, 0x03]) == [.unknownCommand(0x03)])
        #expect(BLEControlReply.parse([0xFF, 0x01, 0x09, 0xFF, 0x01, 0x02]) == [.unknownCommand(0x09), .unknownCommand(0x02)])
        #expect(BLEControlReply.parse([0xFF]) == [.unexpected([0xFF])])
        #expect(BLEControlReply.parse([0xFF, 0x05, 0x01]) == [.unexpected([0xFF, 0x05, 0x01])])
        #expect(BLEControlReply.parse([]) == [])
        #expect(BLEControlReply.unknownCommand(0x03).message.contains("PWM_VAL"))
        // Random bytes never trap.
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<500 {
            let bytes = (0..<Int.random(in: 0...24, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            _ = BLEControlReply.parse(bytes)
        }
    }

    @Test func anFFReplyBecomesAWarningNamingTheCommand() {
        let logs = CapturedLogs()
        let link = BLEControlLink(
            settings: .init(
                adapter: "hci0", filter: .init(serviceUUID: "FFE0"), preferredAddress: nil,
                connectTimeout: .seconds(1), maxWriteBytes: 20, linkBytesPerSecond: 960,
                boardChannels: [0], axisNames: ["pan"], memory: nil),
            bus: .system, logger: logs.logger)
        link.handleNotification([0xFF, 0x01, 0x02])
        link.handleNotification([0x17])  // garbage: debug only
        #expect(logs.all.contains { $0.hasPrefix("warning") && $0.contains("SERVO_VAL") })
        #expect(link.rejectedCommands.load(ordering: .relaxed) == 1)
    }

    @Test func channelsFromEightUpAreRefusedAtStart() {
        let output = BLEControlOutput(config: BLEControlOutputConfig(), logger: Logger(label: "test"), stateDirectory: nil)
        #expect(throws: OutputFault.self) {
            try output.start(channels: [.init(axisName: "pan", channel: 8, kind: .servo)], initial: [.pulse(microseconds: 1500)])
        }
    }
}

/// The board's typed GATT profile: what the link looks for and what it refuses.
@Suite struct BLEControlProfileTests {
    @Test func theSerialCharacteristicNeedsWriteAndNotify() {
        let serial = BLEControlProfile.serial
        #expect(BLEControlProfile.service.uuid == "FFE0" && serial.uuid == "FFE1")
        #expect(serial.missing(in: ["write", "write-without-response", "notify"]).isEmpty)
        #expect(serial.missing(in: ["read", "write-without-response"]) == [.write, .notify])
        #expect(serial.missing(in: ["read", "write"]) == [.notify])
        // A stack that lists no flags is given the benefit of the doubt.
        #expect(serial.missing(in: []).isEmpty)
        #expect(serial.offers(.writeWithoutResponse, flags: ["write", "write-without-response", "notify"]))
        #expect(!serial.offers(.writeWithoutResponse, flags: ["write", "notify"]))
    }
}
