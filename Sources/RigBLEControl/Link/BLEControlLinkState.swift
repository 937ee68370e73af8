/// Where the connection to the board stands; shown in the output's status line and log.
public enum BLEControlLinkState: Sendable, Equatable, CustomStringConvertible {
    case idle
    /// Looking for a board (`StartDiscovery`, filtered by service FFE0).
    case scanning
    /// `Device1.Connect` to this board.
    case connecting(String)
    /// Waiting for `ServicesResolved` and looking up FFE1.
    case resolving(String)
    /// INIT and ANALOG_OUT_EN, with response.
    case initialising(String)
    /// Streaming values.
    case ready(String)
    /// The link dropped; this is the attempt number.
    case reconnecting(Int)
    case stopped

    public var description: String {
        switch self {
        case .idle: "idle"
        case .scanning: "scanning"
        case .connecting(let board): "connecting to \(board)"
        case .resolving(let board): "resolving services of \(board)"
        case .initialising(let board): "initialising \(board)"
        case .ready(let board): "ready (\(board))"
        case .reconnecting(let attempt): "reconnecting (\(attempt))"
        case .stopped: "stopped"
        }
    }

    public var isReady: Bool { if case .ready = self { true } else { false } }
}
