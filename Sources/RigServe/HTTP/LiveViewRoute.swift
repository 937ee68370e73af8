import Hummingbird
import NIOCore
import RigRuntime

/// `GET /api/liveview`: the camera's live view as `multipart/x-mixed-replace` (MJPEG, what
/// an `<img>` plays), each part the camera's own JPEG bytes (stamped, never re-encoded).
/// Each viewer writes the newest frame once its last one has left for the socket
/// (`LiveViewSlot`, `LiveViewPacer`): a slow phone sees fewer frames, never older ones,
/// and never holds up another. Its first
/// viewer turns the camera's live view on, its last turns it off. Frames that stop for
/// longer than the feed's `stallSeconds` are said once (`stalled`); the stream stays open
/// and goes on with the next frame. The token, `Host` and
/// connection rules are every route's (`AccessMiddleware`, `ConnectionGuard`: a stream
/// holds one of the connection slots, as an event stream does); watching takes no control.
extension ServeRoutes {
    static let liveViewBoundary = "rig-frame"
    /// How long the first frame may take (a camera waking its sensor).
    static let firstFrameSeconds = 15.0

    func liveView(_ request: Request, _ context: ServeContext) async throws -> Response {
        guard let camera = parts.console.camera else { throw ServeError(.notFound, "the rig has no camera, so no live view") }
        if let late = camera as? LateCamera, late.found == nil {
            throw ServeError(.conflict, "the camera is not connected (\(late.problem ?? "not found")); no live view until it is")
        }
        guard let feed = parts.console.liveViewFeed else { throw ServeError(.conflict, LiveViewFeed.noLiveView) }
        guard let slot = feed.join() else { throw ServeError(.conflict, feed.state.problem ?? LiveViewFeed.noLiveView) }
        // The first frame before the reply: a camera that turns out to have no live view
        // (libgphoto2's -6) is a 409 with its one line, not an empty stream.
        let timer = Task {
            try? await Task.sleep(for: .seconds(Self.firstFrameSeconds))
            if !Task.isCancelled { slot.close() }
        }
        let first = await slot.next()
        timer.cancel()
        guard let first else {
            feed.leave(slot)
            throw ServeError(
                .conflict, feed.state.problem ?? "the camera sent no live-view frame in \(Int(Self.firstFrameSeconds)) s")
        }
        let pacer = await LiveViewPacer.install(on: context.channel)
        return Response(
            status: .ok,
            headers: [.contentType: "multipart/x-mixed-replace; boundary=\(Self.liveViewBoundary)", .cacheControl: "no-store"],
            body: ResponseBody { writer in
                // While it waits for frames, the stream watches for a stall (said once, by the feed).
                let watch = Task {
                    while !Task.isCancelled {
                        try? await Task.sleep(for: .seconds(min(0.25, feed.stallSeconds / 4)))
                        feed.checkStall()
                    }
                }
                defer {
                    watch.cancel()
                    feed.leave(slot)
                }
                var frame: LiveViewFrame? = first
                while let current = frame, !Task.isCancelled {
                    try await writer.write(Self.part(current))
                    // The frame has left for the socket before the next is taken (the newest then).
                    try await pacer?.writable()
                    frame = await slot.next()
                }
                try await writer.finish(nil)
            })
    }

    /// One part of the stream: its head and the JPEG.
    static func part(_ frame: LiveViewFrame) -> ByteBuffer {
        let head =
            "--\(liveViewBoundary)\r\nContent-Type: image/jpeg\r\nContent-Length: \(frame.jpeg.count)\r\nX-Rig-Frame: \(frame.number)\r\n\r\n"
        var buffer = ByteBuffer()
        buffer.reserveCapacity(head.utf8.count + frame.jpeg.count + 2)
        buffer.writeString(head)
        buffer.writeBytes(frame.jpeg)
        buffer.writeString("\r\n")
        return buffer
    }
}
