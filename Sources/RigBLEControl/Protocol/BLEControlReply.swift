/// What the board sent back in a notification on FFE1, decoded.
public enum BLEControlReply: Sendable, Equatable {
    /// `FF 01 <cmd>`: the board did not understand `command`.
    case unknownCommand(UInt8)
    /// Bytes that are not a reply the firmware sends (kept for a debug log).
    case unexpected([UInt8])

    /// Splits a notification into replies by the length byte. Never traps: truncated or
    /// malformed input becomes `.unexpected`.
    public static func parse(_ bytes: [UInt8]) -> [BLEControlReply] {
        var replies: [BLEControlReply] = []
        var index = 0
        while index < bytes.count {
            guard index + 1 < bytes.count else {
                replies.append(.unexpected(Array(bytes[index...])))
                break
            }
            let command = bytes[index]
            let length = Int(bytes[index + 1])
            let end = index + 2 + length
            guard end <= bytes.count else {
                replies.append(.unexpected(Array(bytes[index...])))
                break
            }
            if command == BLEControlCommand.unknownReply, length == 1 {
                replies.append(.unknownCommand(bytes[index + 2]))
            } else {
                replies.append(.unexpected(Array(bytes[index..<end])))
            }
            index = end
        }
        return replies
    }

    /// The log line for this reply.
    public var message: String {
        switch self {
        case .unknownCommand(let command):
            "the BLEControl board rejected command \(BLEControlCommand.name(command)) (0x\(String(command, radix: 16, uppercase: true))) as unknown: is its firmware the BLE_LCD_PWM one?"
        case .unexpected(let bytes):
            "unexpected bytes from the BLEControl board: " + bytes.map { String($0, radix: 16, uppercase: true) }.joined(separator: " ")
        }
    }
}
