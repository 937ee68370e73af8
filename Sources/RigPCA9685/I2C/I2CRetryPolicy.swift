/// How often a failed I2C transfer is tried again, and how long to wait in between.
///
/// This runs on the control loop thread, so the waits are short: the default tries a
/// transfer 4 times with 0.25, 0.5 and 1 ms in between, 1.75 ms of waiting at most per
/// transfer (plus the failed transfers themselves: a NACK fails within one byte time, an
/// adapter timeout can take longer). Only transient errors (``I2CError/isTransient``) are
/// retried; anything else fails at once.
public struct I2CRetryPolicy: Sendable, Equatable {
    /// The wait before each retry; its count is the number of retries.
    public var backoff: [Duration]

    public init(backoff: [Duration]) {
        self.backoff = backoff
    }

    public static let `default` = I2CRetryPolicy(backoff: [.microseconds(250), .microseconds(500), .milliseconds(1)])
    /// No retries at all.
    public static let none = I2CRetryPolicy(backoff: [])

    /// Attempts per transfer, the first included.
    public var attempts: Int { backoff.count + 1 }
}
