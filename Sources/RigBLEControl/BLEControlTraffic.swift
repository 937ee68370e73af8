import Synchronization

/// What the output handed to the link, tick by tick: for checking the byte budget from the
/// rig's side (the board's receive timestamps say little about radio timing). Bounded: the
/// first `capacity` ticks are kept, later ones only counted. Written by the loop thread
/// without allocation (the storage is reserved up front).
public final class BLEControlTraffic: Sendable {
    /// One tick that produced writes.
    public struct Tick: Sendable, Equatable {
        /// The scheduler's clock, in seconds.
        public var timeSeconds: Double
        public var bytes: Int
        public var writes: Int
        /// The largest write this tick.
        public var largestWrite: Int
    }

    private struct Log {
        var ticks: [Tick]
        var totalBytes = 0
        var totalWrites = 0
    }

    public let capacity: Int
    private let log: Mutex<Log>

    public init(capacity: Int = 65_536) {
        self.capacity = capacity
        var ticks: [Tick] = []
        ticks.reserveCapacity(capacity)
        log = Mutex(Log(ticks: ticks))
    }

    @inline(__always)
    func record(timeSeconds: Double, bytes: Int, writes: Int, largestWrite: Int) {
        guard writes > 0 else { return }
        log.withLock { log in
            log.totalBytes += bytes
            log.totalWrites += writes
            if log.ticks.count < capacity {
                log.ticks.append(Tick(timeSeconds: timeSeconds, bytes: bytes, writes: writes, largestWrite: largestWrite))
            }
        }
    }

    /// The recorded ticks (those that sent anything).
    public var ticks: [Tick] { log.withLock { Array($0.ticks) } }
    public var totalBytes: Int { log.withLock { $0.totalBytes } }
    public var totalWrites: Int { log.withLock { $0.totalWrites } }

    /// The most bytes handed over in any window of `seconds` (sliding over the recorded ticks).
    public func maxBytes(inWindowOfSeconds seconds: Double) -> Int {
        let ticks = self.ticks
        var best = 0
        var sum = 0
        var start = 0
        for end in ticks.indices {
            sum += ticks[end].bytes
            while ticks[end].timeSeconds - ticks[start].timeSeconds >= seconds {
                sum -= ticks[start].bytes
                start += 1
            }
            best = max(best, sum)
        }
        return best
    }
}
