import Synchronization

/// One controller at a time. The client that starts a run, jogs or moves gets a control
/// key: a secret of 128 random bits the server gives to that client only (the
/// `X-Rig-Control` reply header and an HttpOnly cookie), which it presents to keep
/// control. What everyone else sees (the status, a 409, the event stream) is the
/// holder's display name, which proves nothing. Control ends with a stop, the run's end,
/// or `quietSeconds` without a request carrying the key (a closed or stalled page). Time
/// is passed in (monotonic seconds), so tests need no clock.
public final class ControlLease: Sendable {
    public let quietSeconds: Double

    private struct Holder {
        var key: String
        var name: String
        var lastSeenSeconds: Double
    }

    /// The outcome of asking for control.
    public enum Grant: Sendable, Equatable {
        /// Control is the caller's: `key` is what it presents from now on; `issued` says
        /// it is new (send it to the client).
        case granted(key: String, issued: Bool)
        /// Another client holds control: its display name.
        case refused(holder: String)
    }

    private let holder = Mutex<Holder?>(nil)

    public init(quietSeconds: Double = 10) {
        self.quietSeconds = quietSeconds
    }

    /// Takes or refreshes control for the client presenting `key` (nil: none), known to
    /// others as `name`.
    public func acquire(key: String?, name: String, nowSeconds: Double) -> Grant {
        holder.withLock { h in
            if let current = h, nowSeconds - current.lastSeenSeconds < quietSeconds {
                guard let key, Self.same(key, current.key) else { return .refused(holder: current.name) }
                h?.lastSeenSeconds = nowSeconds
                h?.name = name
                return .granted(key: current.key, issued: false)
            }
            let issued = Self.newKey()
            h = Holder(key: issued, name: name, lastSeenSeconds: nowSeconds)
            return .granted(key: issued, issued: true)
        }
    }

    /// Notes that the holder is still there (any request carrying its key), without
    /// taking control. Returns whether `key` holds control.
    @discardableResult
    public func touch(key: String?, nowSeconds: Double) -> Bool {
        holder.withLock { h in
            guard let key, let current = h, nowSeconds - current.lastSeenSeconds < quietSeconds, Self.same(key, current.key) else { return false }
            h?.lastSeenSeconds = nowSeconds
            return true
        }
    }

    /// Gives control up (a stop, the run's end).
    public func release() {
        holder.withLock { $0 = nil }
    }

    /// The display name of who holds control now, if anyone.
    public func current(nowSeconds: Double) -> String? {
        holder.withLock { h in
            guard let c = h, nowSeconds - c.lastSeenSeconds < quietSeconds else { return nil }
            return c.name
        }
    }

    /// 16 bytes from the kernel's CSPRNG as 32 hex digits.
    static func newKey() -> String { Secret.hex(bytes: 16) }

    static func same(_ a: String, _ b: String) -> Bool { Secret.equal(a, b) }
}
