import HTTPTypes
import NIOCore
import NIOHTTPTypes
import Synchronization

/// How many connections `rig serve` keeps and how long a request may take to arrive: on a
/// Pi, file descriptors and memory are the limit, and a client that sends a header byte a
/// second (or opens connections and says nothing) must not hold them. A stranger on the
/// same Wi-Fi, without the token, must not be able to hold them either, or STOP finds no
/// way in: connections that have not shown the token live in a small pool of their own,
/// with a short deadline, and a new one pushes out the oldest of the address holding most.
public struct ConnectionLimits: Sendable {
    /// Open connections at most that have shown the token (or, without a token, sent a
    /// whole request head), event streams included; one more is closed.
    public var maxConnections: Int
    /// A request's head and body must have arrived this long after the connection opened
    /// (or after the previous response ended, on a kept-alive connection), else it is closed.
    /// An event stream, once its request has arrived, is not limited.
    public var requestSeconds: Double
    /// Connections that have not shown the token yet: at most this many at once. One more
    /// closes the oldest of the address that holds the most of them, so a flood from one
    /// address pushes out its own connections, not a phone's.
    public var unauthenticatedConnections: Int
    /// Such a connection must send a request head that shows the token within this long,
    /// and its whole request within this long; after a response it has this long again.
    public var unauthenticatedSeconds: Double
    /// Connections kept beyond `maxConnections` for `POST /api/stop` and `GET /api/status`
    /// alone, so a server full of event streams still takes a STOP.
    public var reservedForStop: Int

    public init(maxConnections: Int = 32, requestSeconds: Double = 10) {
        self.maxConnections = maxConnections
        self.requestSeconds = requestSeconds
        unauthenticatedConnections = max(2, maxConnections / 4)
        unauthenticatedSeconds = min(2, requestSeconds)
        reservedForStop = 4
    }
}

/// The server's open connections, shared by every connection's guard: the ones that have
/// not shown the token (in the order they came, with their address), and the count of
/// those that have, in the main slots and in the ones kept for STOP.
final class ConnectionPool: Sendable {
    let limits: ConnectionLimits

    private struct Waiting {
        var id: Int
        var address: String
        var channel: any Channel
    }

    private struct State {
        var nextID = 0
        var waiting: [Waiting] = []
        var admitted = 0
        var reserved = 0
    }

    /// Where a connection stands.
    enum Standing: Equatable {
        case waiting(id: Int)
        case admitted
        case reserved
    }

    private let state = Mutex(State())

    init(limits: ConnectionLimits) {
        self.limits = limits
    }

    /// A new connection: it waits for its token. Returns its standing and the connection
    /// it pushed out (the caller closes it), if the waiting pool was full.
    func arrive(address: String, channel: any Channel) -> (Standing, pushedOut: (any Channel)?) {
        state.withLock { s in
            let id = s.nextID
            s.nextID += 1
            var pushedOut: (any Channel)?
            if s.waiting.count >= max(1, limits.unauthenticatedConnections) {
                // The address holding the most waiting connections loses its oldest.
                var counts: [String: Int] = [:]
                for w in s.waiting { counts[w.address, default: 0] += 1 }
                let most = counts.values.max() ?? 0
                if let index = s.waiting.firstIndex(where: { counts[$0.address] == most }) {
                    pushedOut = s.waiting.remove(at: index).channel
                }
            }
            s.waiting.append(Waiting(id: id, address: address, channel: channel))
            return (.waiting(id: id), pushedOut)
        }
    }

    /// A connection showed the token (`priority`: its request is a STOP or the status).
    /// Returns its new standing, or nil when there is no room (the caller closes it).
    func admit(_ standing: Standing, priority: Bool) -> Standing? {
        state.withLock { s in
            switch standing {
            case .admitted: return .admitted
            case .waiting(let id):
                // Pushed out meanwhile: gone.
                guard let index = s.waiting.firstIndex(where: { $0.id == id }) else { return nil }
                s.waiting.remove(at: index)
            case .reserved:
                if priority { return .reserved }
                s.reserved -= 1
            }
            if s.admitted < limits.maxConnections {
                s.admitted += 1
                return .admitted
            }
            if priority, s.reserved < limits.reservedForStop {
                s.reserved += 1
                return .reserved
            }
            return nil
        }
    }

    /// The connection closed.
    func leave(_ standing: Standing) {
        state.withLock { s in
            switch standing {
            case .waiting(let id): s.waiting.removeAll { $0.id == id }
            case .admitted: s.admitted -= 1
            case .reserved: s.reserved -= 1
            }
        }
    }

    /// Waiting, admitted and reserved connections (tests).
    var counts: (waiting: Int, admitted: Int, reserved: Int) {
        state.withLock { ($0.waiting.count, $0.admitted, $0.reserved) }
    }
}

/// Enforces ``ConnectionLimits`` on one connection: counts it in as waiting for its token,
/// admits it when a request head shows the token (closing it when the server is full), and
/// closes it when a request does not arrive whole in time.
final class ConnectionGuard: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let pool: ConnectionPool
    private let access: ServeAccess?
    private var standing: ConnectionPool.Standing?
    private var deadline: Scheduled<Void>?
    /// Between a request's head and its end.
    private var reading = false
    /// Requests read whose response has not ended.
    private var responding = 0
    /// Dropped: nothing more is read or counted.
    private var closing = false

    init(pool: ConnectionPool, access: ServeAccess?) {
        self.pool = pool
        self.access = access
    }

    private var limits: ConnectionLimits { pool.limits }

    /// The deadline that applies now: short until the token was shown.
    private var seconds: Double {
        if case .waiting = standing { return limits.unauthenticatedSeconds }
        return limits.requestSeconds
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { arrive(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        arrive(context)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        leave()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        leave()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !closing else { return }
        switch unwrapInboundIn(data) {
        case .head(let head):
            reading = true
            if let current = standing, Self.showsAccess(head, access: access) {
                guard let admitted = pool.admit(current, priority: Self.isStopOrStatus(head)) else {
                    // No room: the pool let go of the connection's place already.
                    standing = nil
                    drop(context)
                    return
                }
                let wasWaiting = if case .waiting = current { true } else { false }
                standing = admitted
                // Shown the token: the body has the full request time from here.
                if wasWaiting { arm(context) }
            }
        case .body: break
        case .end:
            reading = false
            responding += 1
            deadline?.cancel()
            deadline = nil
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) {
            responding = max(0, responding - 1)
            // Kept alive: the next request has its own time to arrive.
            if responding == 0, !reading, !closing { arm(context) }
        }
        context.write(data, promise: promise)
    }

    /// A request head shows the token or a paired phone's cookie (with no token: any whole
    /// head does).
    static func showsAccess(_ head: HTTPRequest, access: ServeAccess?) -> Bool {
        guard let access else { return true }
        return access.grants(head.headerFields)
    }

    /// `POST /api/stop` and `GET /api/status`: what the slots kept for STOP take.
    static func isStopOrStatus(_ head: HTTPRequest) -> Bool {
        let path = head.path.map { $0.split(separator: "?", maxSplits: 1).first.map(String.init) ?? $0 } ?? ""
        return (head.method == .post && path == "/api/stop") || (head.method == .get && path == "/api/status")
    }

    private func arrive(_ context: ChannelHandlerContext) {
        guard standing == nil, !closing else { return }
        let address = context.channel.remoteAddress?.ipAddress ?? "?"
        let (arrived, pushedOut) = pool.arrive(address: address, channel: context.channel)
        standing = arrived
        pushedOut?.close(promise: nil)
        arm(context)
    }

    private func drop(_ context: ChannelHandlerContext) {
        closing = true
        leave()
        context.close(promise: nil)
    }

    private func leave() {
        deadline?.cancel()
        deadline = nil
        if let standing {
            pool.leave(standing)
            self.standing = nil
        }
    }

    private func arm(_ context: ChannelHandlerContext) {
        deadline?.cancel()
        let loop = context.eventLoop.assumeIsolated()
        let channel = context.channel
        deadline = loop.scheduleTask(in: .milliseconds(Int64(seconds * 1000))) {
            channel.close(promise: nil)
        }
    }
}
