import RigCore
import RigRuntime
import Synchronization

/// Wraps an output and keeps every value it reported as sent, per channel, in order.
final class RecordingOutput: Output, @unchecked Sendable {
    let inner: Output
    let sentByChannel = Mutex<[[Double]]>([])
    let safe = Mutex<[ChannelCommand]>([])
    /// Called after every write with the tick number (to drop the link mid-program).
    var afterWrite: (@Sendable (Int) -> Void)?
    private var ticks = 0

    init(_ inner: Output) { self.inner = inner }

    var label: String { inner.label }
    var statusLine: String? { inner.statusLine }

    func start(channels: [OutputChannel], initial: [ChannelCommand]) throws {
        sentByChannel.withLock { $0 = Array(repeating: [], count: channels.count) }
        try inner.start(channels: channels, initial: initial)
    }

    func write(_ commands: [ChannelCommand], sent: inout [Double]) throws(OutputFault) {
        try inner.write(commands, sent: &sent)
        let values = sent
        sentByChannel.withLock { all in
            for index in values.indices where !values[index].isNaN { all[index].append(values[index]) }
        }
        ticks += 1
        afterWrite?(ticks)
    }

    func shutdown(safe: [ChannelCommand]) {
        self.safe.withLock { $0 = safe }
        inner.shutdown(safe: safe)
    }
}
