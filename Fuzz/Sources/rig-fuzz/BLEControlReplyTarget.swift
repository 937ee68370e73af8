import RigBLEControl

/// A BLEControl board's notification on FFE1, whatever it holds: split into replies, each
/// turned into its log line. The replies must cover the input exactly.
enum BLEControlReplyTarget {
    static func run(_ data: [UInt8]) {
        let replies = BLEControlReply.parse(data)
        var covered = 0
        for reply in replies {
            switch reply {
            case .unknownCommand: covered += 3
            case .unexpected(let bytes): covered += bytes.count
            }
            _ = reply.message
        }
        if covered != data.count { fuzzFail("replies cover \(covered) of \(data.count) bytes") }
    }
}
