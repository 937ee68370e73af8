import RigRuntime

/// `RigConsole`'s live view: the camera's feed (a camera found late: once it is), and what
/// the status says about it.
extension RigConsole {
    /// The connected camera's live view; nil without a camera, while it is not connected,
    /// or for a camera that has none (GPIO contacts).
    public var liveViewFeed: LiveViewFeed? {
        let connected = (camera as? LateCamera).map { $0.found } ?? camera
        return (connected as? LiveViewSource)?.liveView
    }

    /// The status's `camera.liveView` for a connected camera.
    var liveViewStatus: ServeStatus.LiveViewStatus {
        guard let feed = liveViewFeed else {
            return ServeStatus.LiveViewStatus(state: "unsupported", problem: LiveViewFeed.noLiveView, viewers: 0)
        }
        let state = feed.state
        return ServeStatus.LiveViewStatus(state: state.word, problem: state.problem, viewers: feed.viewerCount)
    }
}
