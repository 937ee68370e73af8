import Logging
import RigCore
import RigDFMoco
import RigRuntime

/// `rig serve dfmoco` put together: a `CommandSource` run by the one session runner (the
/// trace, the hardware lock, the signals, the safe state on every way out) and a
/// `DFMocoServer` posting to the loop's mailbox and reading the loop's status.
///
/// `init` opens the endpoint, so a busy port or a missing serial device fails before
/// anything starts. `run()` blocks until a signal or `requestShutdown()`: the rig brakes,
/// parks and goes to its safe state, and the server closes.
public final class DFMocoService: @unchecked Sendable {
    public let rig: Rig
    public let server: DFMocoServer
    public let session: RigSession<CommandSource>

    /// - Parameters:
    ///   - startPose: where the rig is (`StartPose.resolve`).
    ///   - version: the rig's version for the `hi` reply.
    public init(
        rig: Rig, output: Output, startPose: [Double], endpoint: DFMocoEndpoint, options: SessionOptions,
        version: String, logger: Logger
    ) throws(DFMocoEndpointError) {
        self.rig = rig
        let source = CommandSource(rig: rig, startPose: startPose)
        var sessionOptions = options
        // The source limits every frame itself; commands that ask too much are clamped, not faults.
        sessionOptions.loop.stopWhenLimited = false
        // The server is a part of the session: it answers once the loop exists, and
        // closes on every way out.
        let part = ServerPart()
        let session = RigSession(
            rig: rig, source: source, output: output, startPose: startPose, parts: [part],
            options: sessionOptions, logger: logger)
        self.session = session
        let rest = DFMocoDevice.Observation(positions: startPose, velocities: [Double](repeating: 0, count: rig.axes.count), ticks: 0)
        server = DFMocoServer(
            rig: rig, version: version, endpoint: endpoint, logger: logger,
            post: { [mailbox = session.mailbox] in mailbox.post($0) },
            observe: {
                guard let status = session.status else { return rest }
                return DFMocoDevice.Observation(positions: status.positions, velocities: status.velocities, ticks: status.ticks, settling: status.settling)
            })
        part.server = server
        try server.open()
    }

    /// The TCP port listened on (the one picked for port 0).
    public var port: UInt16? { server.port }

    /// Runs until a signal or `requestShutdown()`; the server answers from the moment the
    /// control loop runs.
    public func run() throws(SessionError) -> SessionSummary {
        try session.run()
    }

    /// Brake, park, safe state; `run()` then returns. Any thread.
    public func requestShutdown() { session.requestShutdown() }
}

/// The DFMoco server as a session part: started once the loop exists, stopped when the
/// session ends, whichever way.
private final class ServerPart: SessionPart {
    var server: DFMocoServer?
    var partName: String { "dfmoco" }
    func start(_ door: SessionDoor) throws(PartStartFailure) { server?.start() }
    func finish(_ outcome: SessionOutcome) { server?.stop() }
}
