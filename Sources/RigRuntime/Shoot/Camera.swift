import RigCore

/// Why a camera could not take a shot (a line that could not be driven, a closed camera).
public struct CameraError: Error, Sendable, CustomStringConvertible {
    public var description: String
    /// The camera refused what was asked (no such setting, a value it does not list, a
    /// read-only one): the asker's mistake, not the camera's failure.
    public var refused: Bool
    public init(_ description: String, refused: Bool = false) {
        self.description = description
        self.refused = refused
    }
}

/// A camera the rig fires: GPIO contacts (`GPIOCamera` in RigStepSync) or the simulated
/// one. The shot runner calls it from the session's event thread; it must not block
/// that thread for the length of a shot.
public protocol Camera: AnyObject, Sendable {
    /// For the live view and logs ("gpio gpiochip0 27/22", "sim").
    var label: String { get }
    /// True: the camera reports each shot's end (`done`), and the player holds until it
    /// does. False: the player ends the shot after its planned time (the simulator).
    var reportsShotDone: Bool { get }
    /// Takes one shot off the caller's thread and calls `done` once the exposure is over
    /// (the contacts open; a camera that reports files: the camera confirmed the new
    /// file), with what the camera reported, or with the error that stopped it.
    func shoot(_ request: ShotRequest, done: @escaping @Sendable (Result<ShotReport, CameraError>) -> Void)
    /// Opens both contacts now and releases the hardware (every way out calls this; a
    /// shot under way is cut short and reports nothing). Idempotent.
    func close()
    /// `close()` was called: a shot it cut short is no fault.
    var isClosed: Bool { get }
    /// Hardware the camera uses exclusively (GPIO lines), as `HardwareLock` names: the
    /// session locks them with the output's, before `start`.
    var exclusiveResources: [String] { get }
    /// Takes the hardware, once the session holds the locks and the output runs (before
    /// the trigger and the first shot).
    func start() throws
}

extension Camera {
    public var exclusiveResources: [String] { [] }
    public func start() throws {}
}

/// One frame to take: its timing (focus, shutter, exposure, release), and where it belongs
/// (a camera that can be set picks the frame's settings by them).
public struct ShotRequest: Sendable {
    public var timing: ShotTiming
    /// 0-based step (or shot, for a keyframes program's `--interval`).
    public var step: Int
    /// 1-based frame of the step's bracket.
    public var bracket: Int
    /// The frame's exposure when a ramp sets it (the timing's hold is its shutter in bulb).
    public var exposure: ExposureSettings?
    /// When the shot starts, in seconds on the run's clock (a simulated scene's time).
    public var runSeconds: Double

    public init(timing: ShotTiming, step: Int = 0, bracket: Int = 1, exposure: ExposureSettings? = nil, runSeconds: Double = 0) {
        self.timing = timing
        self.step = step
        self.bracket = bracket
        self.exposure = exposure
        self.runSeconds = runSeconds
    }
}

/// What a camera reported about a frame it took: nothing for a contact closure; the new
/// file and the settings used for a camera that reports them.
public struct ShotReport: Sendable, Equatable {
    public var file: String?
    public var downloaded: String?
    public var settings: [CameraSetting]

    public init(file: String? = nil, downloaded: String? = nil, settings: [CameraSetting] = []) {
        self.file = file
        self.downloaded = downloaded
        self.settings = settings
    }

    public static let none = ShotReport()
}

/// A camera that reports its battery ("50%"), as last read (never a blocking read).
public protocol BatteryReporting: AnyObject {
    var lastBattery: String? { get }
}

/// A camera that measures its frames (the gphoto2 camera's downloads, the simulated
/// camera's scene): the shot runner logs each measure and a ramp follows it.
public protocol ImageReporting: AnyObject {
    /// Called (on the camera's thread) with each frame's measure.
    func onImage(_ handler: @escaping @Sendable (ShotLogImage) -> Void)
}
