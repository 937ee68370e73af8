import Dispatch
import FoundationEssentials
import Glibc

/// How the server guards its API.
public struct ServeSettings: Sendable {
    public var listen: ListenAddress
    /// Required on every API request when set (any non-loopback listener, or `--token-file`).
    public var token: AccessToken?
    /// The paired phones, whose cookie is taken wherever the token is (with a token only).
    public var pairing: PairingBook?
    /// Wrong pairing codes at most, a minute.
    public var pairingGate = PairingGate()
    /// Monotonic seconds (the control lease's clock); tests pass their own.
    public var nowSeconds: @Sendable () -> Double
    /// Connections at most and how long a request may take to arrive.
    public var connections = ConnectionLimits()

    public init(
        listen: ListenAddress, token: AccessToken?, pairing: PairingBook? = nil,
        nowSeconds: @escaping @Sendable () -> Double = { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }
    ) {
        self.listen = listen
        self.token = token
        self.pairing = pairing
        self.nowSeconds = nowSeconds
    }

    /// What lets a client in, when the server needs its token.
    public var access: ServeAccess? { token.map { ServeAccess(token: $0, pairing: pairing) } }
}
