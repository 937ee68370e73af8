/// Cuts a byte stream into DFMoco lines. Lines end in `\n` (a `\r` before it is dropped; a
/// lone `\r` also ends a line, as some serial terminals send). A line longer than
/// `maximumLineBytes` is dropped whole, up to its end, and reported once, so that no
/// input can make the buffer grow without bound.
public struct DFMocoLineBuffer: Sendable {
    public static let maximumLineBytes = 256

    /// What the next piece of the stream is.
    public enum Item: Sendable, Equatable {
        case line([UInt8])
        /// A line was over the limit and has been skipped; `bytes` counts what was seen
        /// up to the point of dropping.
        case tooLong(bytes: Int)
    }

    private var pending: [UInt8] = []
    private var discarding = false

    public init() {
        pending.reserveCapacity(Self.maximumLineBytes + 1)
    }

    /// Feeds received bytes; returns the complete lines (and overflows) they finish, in
    /// order. Empty lines are skipped.
    public mutating func append<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> [Item] {
        var items: [Item] = []
        for byte in bytes {
            if byte == 0x0A || byte == 0x0D {
                if discarding {
                    discarding = false
                } else if !pending.isEmpty {
                    items.append(.line(pending))
                }
                pending.removeAll(keepingCapacity: true)
                continue
            }
            if discarding { continue }
            pending.append(byte)
            if pending.count > Self.maximumLineBytes {
                items.append(.tooLong(bytes: pending.count))
                pending.removeAll(keepingCapacity: true)
                discarding = true
            }
        }
        return items
    }
}
