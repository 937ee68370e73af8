import RigCore

/// How `rig jog` runs (what the command line sets).
public struct JogOptions: Sendable {
    /// Which input drives the rig.
    public enum Keyboard: Sendable, Equatable {
        /// The keyboard when no gamepad is there at the start and stdin is a terminal.
        case auto
        /// Never the keyboard: wait for a gamepad.
        case never
        /// The keyboard even when a gamepad is present (both work).
        case always
    }

    /// The rig file as given on the command line (the program names it relative to
    /// itself).
    public var rigPath: String
    /// `--device /dev/input/eventN`: only this node.
    public var device: String?
    /// `--record OUT.json`: the program file saved after every change.
    public var recordPath: String?
    /// `--trace FILE`: the loop's CSV trace.
    public var tracePath: String?
    /// `--spacing`: seconds between keys (keyframes) or frames between keys (timelapse);
    /// nil: the rig file's `jog.spacingSeconds` (default 2 s), or 1 frame.
    public var spacing: Double?
    /// `--timelapse`: record a timelapse (keys by frame number) instead of keyframes.
    public var timelapse = false
    public var keyboard = Keyboard.auto
    /// Where to look for gamepads.
    public var devicesDirectory = "/dev/input"
    /// SCHED_FIFO and mlockall for the loop thread, when granted.
    public var realtime = true
    /// The pose the rig is in when the session starts (nil: where the output remembers
    /// the last run left it, else home).
    public var startPose: [Double]?
    /// The loop's mailbox, where other threads may post `MotionCommand`s to the jog source
    /// (nil: a private one).
    public var mailbox: SourceMailbox?

    public init(
        rigPath: String, device: String? = nil, recordPath: String? = nil, tracePath: String? = nil,
        spacing: Double? = nil, timelapse: Bool = false
    ) {
        self.rigPath = rigPath
        self.device = device
        self.recordPath = recordPath
        self.tracePath = tracePath
        self.spacing = spacing
        self.timelapse = timelapse
    }
}
