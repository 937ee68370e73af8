@testable import RigBLEControl

/// Decodes BLE writes the way the board's firmware does (framing by the length byte) and
/// records what a careful sender must never do.
struct FirmwareDecoder {
    struct Command: Equatable {
        var command: UInt8
        var data: [UInt8]
        var channel: Int? { data.first.map(Int.init) }
        var value: Int? { data.count == 3 ? Int(data[1]) << 8 | Int(data[2]) : nil }
    }

    var maxWriteBytes = 20
    var commands: [Command] = []
    var violations: [String] = []

    mutating func receive(_ write: [UInt8]) {
        if write.count > maxWriteBytes { violations.append("write of \(write.count) bytes > \(maxWriteBytes)") }
        var index = 0
        var afterInit = false
        while index < write.count {
            guard index + 1 < write.count, index + 2 + Int(write[index + 1]) <= write.count else {
                violations.append("command split across writes: \(write[index...])")
                return
            }
            let command = write[index]
            let length = Int(write[index + 1])
            let data = Array(write[(index + 2)..<(index + 2 + length)])
            if afterInit { violations.append("\(BLEControlCommand.name(command)) packed after INIT") }
            switch command {
            case BLEControlCommand.initialise: afterInit = true
            case BLEControlCommand.analogOutEnable, BLEControlCommand.servoValue, BLEControlCommand.pwmValue:
                if let channel = data.first, channel >= 8 { violations.append("channel \(channel) ≥ 8") }
                if data.count == 3, Int(data[1]) << 8 | Int(data[2]) > 1000 { violations.append("value > 1000") }
            case BLEControlCommand.lcdText:
                // The firmware copies text and terminator into a 16-byte buffer.
                if length - 1 > 16 { violations.append("LCD line of \(length - 2) bytes overruns the 16-byte buffer") }
                if data.last != 0 { violations.append("LCD text without terminator") }
            case BLEControlCommand.lcdClear: break
            default: violations.append("unknown command \(command)")
            }
            commands.append(Command(command: command, data: data))
            index += 2 + length
        }
    }
}
