import NIOCore

#if canImport(Glibc)
    import Glibc
#endif

/// One live-view stream's pace: its next frame is taken from the viewer's slot only once
/// the last one has left NIO's buffer for the socket, and the socket keeps at most
/// `unsentBytes` of it unsent (TCP_NOTSENT_LOWAT). A viewer behind a slow link thus backs
/// up into its slot of one, which keeps the newest frame, instead of into buffers that
/// would hand it old frames in order (NIO's would take a frame whenever it had room under
/// 64 KB, the kernel's send buffer grows to 4 MB on its own): the frames in flight are the
/// link's, never a queue of the server's.
///
/// A handler first in the connection's pipeline that sees its writability change; its state
/// is touched on the channel's event loop only.
final class LiveViewPacer: ChannelInboundHandler, RemovableChannelHandler, @unchecked Sendable {
    typealias InboundIn = NIOAny

    /// At most this much of a stream is left unsent in its socket.
    static let unsentBytes = 16 << 10

    private let channel: any Channel
    /// Writers waiting for the channel to take more (event loop only).
    private var waiting: [EventLoopPromise<Void>] = []

    private init(channel: any Channel) {
        self.channel = channel
    }

    /// Bounds what `channel` holds (NIO's buffer: nothing once a write is out; the socket's:
    /// `unsentBytes`) and watches it; nil where the channel is not a socket's (the tests'
    /// in-memory one), which then goes unpaced.
    static func install(on channel: any Channel) async -> LiveViewPacer? {
        do {
            try await channel.setOption(ChannelOptions.writeBufferWaterMark, value: .init(low: 1, high: 1)).get()
            try await channel.setOption(ChannelOptions.tcpOption(.init(rawValue: CInt(TCP_NOTSENT_LOWAT))), value: unsentBytes).get()
            let pacer = LiveViewPacer(channel: channel)
            try await channel.pipeline.addHandler(pacer, position: .first).get()
            return pacer
        } catch {
            return nil
        }
    }

    /// Returns once the channel has handed everything written so far to the socket (or is
    /// closed).
    func writable() async throws {
        try await channel.eventLoop.flatSubmit { [self] () -> EventLoopFuture<Void> in
            if !channel.isActive || channel.isWritable { return channel.eventLoop.makeSucceededVoidFuture() }
            let promise = channel.eventLoop.makePromise(of: Void.self)
            waiting.append(promise)
            return promise.futureResult
        }.get()
    }

    private func wake() {
        let woken = waiting
        waiting = []
        for promise in woken { promise.succeed() }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable { wake() }
        context.fireChannelWritabilityChanged()
    }

    func channelInactive(context: ChannelHandlerContext) {
        wake()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        wake()
    }
}
