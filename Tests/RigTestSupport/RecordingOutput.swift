import Glibc
import RigCore
import RigRuntime
import Synchronization

/// The one fake output of the test targets: records what it was started with, every
/// frame, every value reported as sent (per channel) and every shutdown. On its own it
/// reports each command's pulse as sent (a pwm duty as the high time of a 20 ms period);
/// wrapped around a real output (`RecordingOutput(inner)`) it passes everything through
/// and records what that output reported.
public final class RecordingOutput: Output, @unchecked Sendable {
    public struct Log: Sendable {
        public var started: [ChannelCommand] = []
        public var writes: [[ChannelCommand]] = []
        public var shutdowns: [[ChannelCommand]] = []
        /// What was put on the text display (as the BLEControl board's LCD), in order.
        public var texts: [[String]] = []
        /// Each planned move's coming pulses the loop told (`expect`): after how many
        /// writes, the ticks until the move's frames stop, and the pulses by tick (1…ticks;
        /// only the last `window` told, NaN before), one array per tick.
        public var expected: [(afterWrites: Int, ticks: Int, pulses: [[Double]])] = []
    }

    public let inner: Output?
    public let log = Mutex(Log())
    public let sentByChannel = Mutex<[[Double]]>([])
    /// Writes from this one on throw an `OutputFault` ("bus gone"): a bus that went away.
    public var failAtWrite: Int?
    /// Called after every write with the write's number (to drop a link mid-program).
    public var afterWrite: (@Sendable (Int) -> Void)?
    /// Called before the shutdown is passed on (to keep a link up until a reply arrived).
    public var beforeShutdown: (@Sendable () -> Void)?
    public var exclusiveResources: [String] = []
    /// What a write throws from `failAtWrite` on.
    public static let busGone = OutputFault(.system(errno: EIO), device: "recording output", "bus gone")

    public init(_ inner: Output? = nil) { self.inner = inner }

    public var label: String { inner?.label ?? "recording" }
    public var statusLine: String? { inner?.statusLine }

    /// The last shutdown's safe commands (empty before one).
    public var safe: [ChannelCommand] { log.withLock { $0.shutdowns.last ?? [] } }

    public func start(channels: [OutputChannel], initial: [ChannelCommand]) throws {
        log.withLock { $0.started = initial }
        sentByChannel.withLock { $0 = Array(repeating: [], count: channels.count) }
        try inner?.start(channels: channels, initial: initial)
    }

    public func write(_ commands: [ChannelCommand], sent: inout [Double]) throws(OutputFault) {
        let n = log.withLock { l in
            l.writes.append(commands)
            return l.writes.count
        }
        if let failAtWrite, n >= failAtWrite { throw Self.busGone }
        if let inner {
            try inner.write(commands, sent: &sent)
        } else {
            for i in commands.indices {
                switch commands[i] {
                case .pulse(let us): sent[i] = us
                case .duty(let p): sent[i] = p / 100 * 20_000
                case .off: sent[i] = .nan
                }
            }
        }
        let values = sent
        sentByChannel.withLock { all in
            for index in values.indices where index < all.count && !values[index].isNaN { all[index].append(values[index]) }
        }
        afterWrite?(n)
    }

    public func elapsedWithoutWrites(ticks: Int) { inner?.elapsedWithoutWrites(ticks: ticks) }

    public var looksAhead: Bool { inner?.looksAhead ?? false }

    public func expect(pulses: [Double], window: Int, ticks: Int) {
        let columns = window > 0 ? pulses.count / window : 0
        let byTick = (1...max(ticks, 1)).map { k in
            let row = k - ticks + window - 1
            return row >= 0 && row < window ? Array(pulses[(row * columns)..<(row * columns + columns)]) : [Double](repeating: .nan, count: columns)
        }
        log.withLock { $0.expected.append(($0.writes.count, ticks, byTick)) }
        inner?.expect(pulses: pulses, window: window, ticks: ticks)
    }

    public func shutdown(safe: [ChannelCommand]) {
        log.withLock { $0.shutdowns.append(safe) }
        beforeShutdown?()
        inner?.shutdown(safe: safe)
    }
}

/// A text display like the BLEControl board's LCD: every pair of lines is recorded.
extension RecordingOutput: TextDisplay {
    public func showText(line1: String, line2: String) {
        log.withLock { $0.texts.append([line1, line2]) }
    }
}
