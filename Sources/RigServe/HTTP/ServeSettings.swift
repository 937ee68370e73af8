import Foundation

/// How the server guards its API.
public struct ServeSettings: Sendable {
    public var listen: ListenAddress
    /// Required on every API request when set (any non-loopback listener, or `--token-file`).
    public var token: AccessToken?
    /// Monotonic seconds (the control lease's clock); tests pass their own.
    public var nowSeconds: @Sendable () -> Double
    /// Connections at most and how long a request may take to arrive.
    public var connections = ConnectionLimits()

    public init(
        listen: ListenAddress, token: AccessToken?,
        nowSeconds: @escaping @Sendable () -> Double = { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }
    ) {
        self.listen = listen
        self.token = token
        self.nowSeconds = nowSeconds
    }
}
