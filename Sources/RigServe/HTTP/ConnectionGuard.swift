import NIOCore
import NIOHTTPTypes
import Synchronization

/// How many connections `rig serve` keeps and how long a request may take to arrive: on a
/// Pi, file descriptors and memory are the limit, and a client that sends a header byte a
/// second (or opens connections and says nothing) must not hold them.
public struct ConnectionLimits: Sendable {
    /// Open connections at most, event streams included; one more is closed at once.
    public var maxConnections: Int
    /// A request's head and body must have arrived this long after the connection opened
    /// (or after the previous response ended, on a kept-alive connection), else it is closed.
    /// An event stream, once its request has arrived, is not limited.
    public var requestSeconds: Double

    public init(maxConnections: Int = 32, requestSeconds: Double = 10) {
        self.maxConnections = maxConnections
        self.requestSeconds = requestSeconds
    }
}

/// The server's open connections, shared by every connection's guard.
final class ConnectionCount: Sendable {
    let open = Atomic<Int>(0)
}

/// Enforces ``ConnectionLimits`` on one connection: counts it in (closing it when the
/// server is full), and closes it when a request does not arrive whole in time.
final class ConnectionGuard: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let limits: ConnectionLimits
    private let count: ConnectionCount
    private var counted = false
    private var deadline: Scheduled<Void>?
    /// Between a request's head and its end.
    private var reading = false
    /// Requests read whose response has not ended.
    private var responding = 0

    init(limits: ConnectionLimits, count: ConnectionCount) {
        self.limits = limits
        self.count = count
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { admit(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        admit(context)
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
        switch unwrapInboundIn(data) {
        case .head: reading = true
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
            if responding == 0, !reading { arm(context) }
        }
        context.write(data, promise: promise)
    }

    private func admit(_ context: ChannelHandlerContext) {
        guard !counted else { return }
        counted = true
        let open = count.open.add(1, ordering: .relaxed).newValue
        if open > limits.maxConnections {
            context.close(promise: nil)
            return
        }
        arm(context)
    }

    private func leave() {
        deadline?.cancel()
        deadline = nil
        if counted {
            counted = false
            count.open.subtract(1, ordering: .relaxed)
        }
    }

    private func arm(_ context: ChannelHandlerContext) {
        deadline?.cancel()
        let loop = context.eventLoop.assumeIsolated()
        let channel = context.channel
        deadline = loop.scheduleTask(in: .milliseconds(Int64(limits.requestSeconds * 1000))) {
            channel.close(promise: nil)
        }
    }
}
