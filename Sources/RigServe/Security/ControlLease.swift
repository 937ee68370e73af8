import Synchronization

/// One controller at a time: the client that starts a run or jogs holds control until it
/// releases it (stop, the run's end) or has been quiet for `quietSeconds`; anyone may
/// watch. Time is passed in (monotonic seconds), so tests need no clock.
public final class ControlLease: Sendable {
    public let quietSeconds: Double

    private struct Holder {
        var client: String
        var lastSeenSeconds: Double
    }

    private let holder = Mutex<Holder?>(nil)

    public init(quietSeconds: Double = 10) {
        self.quietSeconds = quietSeconds
    }

    /// Takes or refreshes control for `client`. Returns nil on success, or the client that
    /// holds control.
    public func acquire(_ client: String, nowSeconds: Double) -> String? {
        holder.withLock { h in
            if let current = h, current.client != client, nowSeconds - current.lastSeenSeconds < quietSeconds {
                return current.client
            }
            h = Holder(client: client, lastSeenSeconds: nowSeconds)
            return nil
        }
    }

    /// Notes that the holder is still there (it watches the events), without taking control.
    public func touch(_ client: String, nowSeconds: Double) {
        holder.withLock { h in
            if h?.client == client { h?.lastSeenSeconds = nowSeconds }
        }
    }

    /// Gives control up (a stop, the run's end).
    public func release() {
        holder.withLock { $0 = nil }
    }

    /// Who holds control now, if anyone.
    public func current(nowSeconds: Double) -> String? {
        holder.withLock { h in
            guard let c = h, nowSeconds - c.lastSeenSeconds < quietSeconds else { return nil }
            return c.client
        }
    }
}
