import RigGamepad

/// Raw bytes as read from /dev/input/eventN: 24-byte records (a short tail is what a torn
/// read leaves) through the decoder, with a resync whenever it asks for one.
enum EvdevTarget {
    static func run(_ data: [UInt8]) {
        var decoder = EvdevDecoder()
        let count = data.count / InputEvent.byteCount
        data.withUnsafeBytes { raw in
            for k in 0..<count {
                let event = InputEvent(bytes: raw, offset: k * InputEvent.byteCount)
                if decoder.feed(event) == .resyncNeeded {
                    decoder.resync { _ in }
                }
            }
        }
        var roundTrip: [UInt8] = []
        if count > 0 {
            let first = data.withUnsafeBytes { InputEvent(bytes: $0, offset: 0) }
            first.encode(into: &roundTrip)
            if roundTrip != Array(data[0..<InputEvent.byteCount]) { fuzzFail("an event does not encode back to its bytes") }
        }
    }
}
