import FoundationEssentials
import Glibc
import Synchronization

/// Limits guessing at pairing codes: after `maxFailures` wrong codes within `windowSeconds`
/// every attempt is refused (429, even the right code) until the oldest of them is older
/// than the window. One limit for all clients (a stranger on the Wi-Fi can take another
/// address, but not more tries): 5 a minute against a code of 31⁸ ≈ 2⁴⁰ values that lives
/// 10 minutes is one chance in 20 billion per code.
public final class PairingGate: @unchecked Sendable {
    public let maxFailures: Int
    public let windowSeconds: Double
    private let lock = Mutex<Void>(())
    private var failures: [Double] = []

    public init(maxFailures: Int = 5, windowSeconds: Double = 60) {
        self.maxFailures = maxFailures
        self.windowSeconds = windowSeconds
    }

    /// Seconds until an attempt is taken again, or nil when it is taken now.
    public func retryAfter(nowSeconds now: Double) -> Double? {
        lock.withLock { _ in
            failures.removeAll { now - $0 >= windowSeconds }
            guard failures.count >= maxFailures, let oldest = failures.first else { return nil }
            return max(0, windowSeconds - (now - oldest))
        }
    }

    /// A wrong code was tried.
    public func failed(nowSeconds now: Double) {
        lock.withLock { _ in failures.append(now) }
    }
}
