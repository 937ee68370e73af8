import RigCore
import RigFormat
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

    /// Tap to aim: the pose that brings the view's point (`x` across from the left, `y` down
    /// from the top, 0…1) to the centre; nothing moves here (the caller takes control, then
    /// goes there as a limited move like any other go-to). `fovDeg` is the lens's horizontal
    /// field of view (the simulated camera knows its own); `aspect` the view's width /
    /// height. Refused with the reason when the rig has no pan and tilt axes, the field of
    /// view is unknown, or the point is beyond an axis's soft limits.
    func aimPose(x: Double, y: Double, aspect: Double, fovDeg: Double?) throws(ServeError) -> (pose: [Double?], pan: Double, tilt: Double) {
        guard let panIndex = rig.axisIndex(named: "pan"), let tiltIndex = rig.axisIndex(named: "tilt") else {
            throw ServeError(.conflict, "tap to aim turns axes named \"pan\" and \"tilt\"; this rig has \(rig.axes.map(\.name).joined(separator: ", "))")
        }
        let connected = (camera as? LateCamera).map { $0.found } ?? camera
        guard let fov = fovDeg ?? (connected as? LiveViewSource)?.liveViewFieldOfViewDegrees else {
            throw ServeError(.conflict, "this camera does not say its lens: give \"fovDeg\", the lens's horizontal field of view in degrees")
        }
        let now = pose
        let target = ViewAim.target(
            panDegrees: now[panIndex], tiltDegrees: now[tiltIndex], x: x, y: y, horizontalFOVDegrees: fov, aspect: aspect)
        for (index, value) in [(panIndex, target.pan), (tiltIndex, target.tilt)] {
            let axis = rig.axes[index]
            if value < axis.softMin || value > axis.softMax {
                throw ServeError(
                    .conflict,
                    "that point is at \(axis.name) \(fixed(value, 1))°, beyond its soft limits \(format(axis.softMin))…\(format(axis.softMax))°: it cannot be brought to the centre"
                )
            }
        }
        var goal = [Double?](repeating: nil, count: rig.axes.count)
        goal[panIndex] = target.pan
        goal[tiltIndex] = target.tilt
        return (goal, target.pan, target.tilt)
    }

    /// The connected camera's AF point, if a tap can move it.
    private var focusPointSource: FocusPointSource? {
        let connected = (camera as? LateCamera).map { $0.found } ?? camera
        return connected as? FocusPointSource
    }

    /// The one line why a tap cannot focus this camera, nil when it can.
    var focusPointProblem: String? {
        guard camera != nil else { return "the rig has no camera" }
        if let late = camera as? LateCamera, late.found == nil { return "the camera is not connected (\(late.problem ?? "not found"))" }
        guard let source = focusPointSource else { return "this camera has no AF point a tap can move (only a gphoto2 camera, or the simulated one, has)" }
        return source.focusPointProblem
    }

    /// Tap to focus: moves the camera's AF point to the view's point (`x`, `y` 0…1, `aspect`
    /// the view's width / height) and focuses there (the camera's worker, bounded). Refused
    /// with the one line when the camera cannot.
    func focus(x: Double, y: Double, aspect: Double) throws(ServeError) -> FocusReport {
        if let problem = focusPointProblem { throw ServeError(.conflict, problem) }
        guard let source = focusPointSource else { throw ServeError(.conflict, "this camera has no AF point a tap can move") }
        let report: FocusReport
        do { report = try source.focus(viewX: x, viewY: y, viewAspect: aspect) } catch {
            throw ServeError(error.refused ? .conflict : .serviceUnavailable, "the camera did not focus: \(error.description)")
        }
        shared.withLock { $0.focusPoint = ServeStatus.ViewPoint(x: x, y: y) }
        changed()
        return report
    }

    /// The live view's width / height, from its newest frame (nil while none has come).
    var liveViewAspect: Double? {
        guard let frame = liveViewFeed?.newestFrame, let decoded = JPEG.decode(frame.jpeg) else { return nil }
        return Double(decoded.width) / Double(decoded.height)
    }

    /// The status's `camera.liveView` for a connected camera.
    var liveViewStatus: ServeStatus.LiveViewStatus {
        let problem = focusPointProblem
        let focus = ServeStatus.FocusStatus(available: problem == nil, problem: problem, point: problem == nil ? shared.withLock { $0.focusPoint } : nil)
        guard let feed = liveViewFeed else {
            return ServeStatus.LiveViewStatus(state: "unsupported", problem: LiveViewFeed.noLiveView, viewers: 0, focus: focus, fovDeg: nil)
        }
        let state = feed.state
        let connected = (camera as? LateCamera).map { $0.found } ?? camera
        return ServeStatus.LiveViewStatus(
            state: state.word, problem: state.problem, viewers: feed.viewerCount, focus: focus,
            fovDeg: (connected as? LiveViewSource)?.liveViewFieldOfViewDegrees)
    }
}
