/// What the jog source reports to the session, which acts on it off the loop thread
/// (saving files, logging). Pushed on a ring the session drains.
public enum JogNotice: Sendable, Equatable {
    /// Record this pose as the next keyframe.
    case record(pose: [Double])
    /// Delete the last keyframe.
    case deleteLast
    /// Save and end the session.
    case save
    /// End the session.
    case quit
    /// The speed level changed (0 fine, 1 normal, 2 coarse).
    case speed(level: Int, fraction: Double)
    /// No input while moving for the watchdog's time: the rig decelerated to a stop.
    case watchdogStopped
    /// The input device vanished: the rig decelerated to a stop.
    case inputLost
    /// An input device is (again) connected.
    case inputConnected
    case homing
    case previewStarted
    case previewEnded
    /// Preview was asked for but nothing is recorded yet.
    case nothingToPreview
}
