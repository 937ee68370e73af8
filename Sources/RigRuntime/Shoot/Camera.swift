import RigCore
import RigSky

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
    /// True: the camera opens its shutter at a request's `shutterAtNs` itself (focusing
    /// before it) and measures that edge (`ShotReport.edgeNs`): a group's shot is then
    /// together to within its clock and its thread's wake-up. False: a group fires it
    /// from a timer at that time, and the edge is when it was asked.
    var firesAtTime: Bool { get }
}

extension Camera {
    public var exclusiveResources: [String] { [] }
    public func start() throws {}
    public var firesAtTime: Bool { false }
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
    /// A group's shot (a camera that `firesAtTime`): the shutter closes at this UTC
    /// nanosecond on the wall clock, the focus its `focusSeconds` before. Nil: at once.
    public var shutterAtNs: Int64?

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
    /// The copy of the file, once it is made (never a path the copy was meant to take).
    public var downloaded: String?
    public var settings: [CameraSetting]
    /// Why the frame was not copied although it should have been, and where it is safe
    /// (the camera's card): the run goes on, and the log says so beside the shot.
    public var downloadProblem: String?
    /// When the shutter contact closed, UTC nanoseconds, as the camera measured it (a
    /// camera that `firesAtTime`, for a group's shot).
    public var edgeNs: Int64?

    public init(file: String? = nil, downloaded: String? = nil, settings: [CameraSetting] = [], downloadProblem: String? = nil) {
        self.file = file
        self.downloaded = downloaded
        self.settings = settings
        self.downloadProblem = downloadProblem
    }

    public static let none = ShotReport()
}

/// A camera the rig sets (the gphoto2 camera): each frame's settings come from an
/// `ExposurePlan` matched to the camera's own choices before anything moves.
public protocol SettableCamera: Camera {
    /// The exposure settings the camera offers, under its own names.
    func choices() throws(CameraError) -> CameraChoices
    /// The settings of each frame of the run to come.
    func prepare(_ exposure: ExposurePlan)
}

extension SettableCamera {
    /// Matches `program`'s exposure, its steps' and its bracket to the camera's choices and
    /// gives it the frames, for `rig play` and `rig serve` alike: the camera's failure, or
    /// the problem naming the step and the valid choices.
    public func prepare(for program: Program) -> Result<ExposurePlan, ExposurePreparation> {
        plan(for: program).map { plan in
            prepare(plan)
            return plan
        }
    }

    /// The frames `program` asks for, matched to the camera's choices; nothing is given
    /// to the camera yet (`prepare(_:)` does).
    public func plan(for program: Program) -> Result<ExposurePlan, ExposurePreparation> {
        let choices: CameraChoices
        do { choices = try self.choices() } catch { return .failure(.camera(error)) }
        return ExposurePlan.make(program: program, camera: choices).mapError { .mismatch($0) }
    }
}

/// Why a program's exposure could not be prepared on the camera.
public enum ExposurePreparation: Error, Sendable, CustomStringConvertible {
    /// The camera did not answer (exit 1, 503).
    case camera(CameraError)
    /// The program asks for what the camera does not offer (exit 2, 422).
    case mismatch(ExposureProblem)

    public var description: String {
        switch self {
        case .camera(let error): "camera: \(error)"
        case .mismatch(let problem): "\(problem)"
        }
    }
}

/// A camera that reports its battery ("50%"), as last read (never a blocking read).
public protocol BatteryReporting: AnyObject {
    var lastBattery: String? { get }
    /// Reads the battery now (a round trip to the camera: never on a shot's path).
    func battery() -> String?
}

/// What a camera's battery text says: its percentage where it gives one ("50%"; "Full"
/// gives none), and whether that is low, one rule for `doctor`, `play` and the page.
public enum BatteryLevel {
    /// Below this a shoot is warned about.
    public static let lowPercent = 20

    public static func percent(_ level: String) -> Int? {
        let digits = level.filter(\.isNumber)
        return digits.isEmpty || digits.count > 3 ? nil : Int(digits)
    }

    public static func isLow(_ level: String) -> Bool { percent(level).map { $0 < lowPercent } ?? false }
}

/// One of a camera's storages (a card): its size, what is free, and how many more frames
/// the camera says fit (its own guess at its current quality), each when it reports it.
public struct CameraStorage: Sendable, Equatable, Encodable {
    public var label: String
    public var capacityKiB: Int?
    public var freeKiB: Int?
    public var freeImages: Int?

    public init(label: String, capacityKiB: Int?, freeKiB: Int?, freeImages: Int?) {
        self.label = label
        self.capacityKiB = capacityKiB
        self.freeKiB = freeKiB
        self.freeImages = freeImages
    }

    private enum Keys: String, CodingKey { case label, capacityKiB, freeKiB, freeImages }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: Keys.self)
        try c.encode(label, forKey: .label)
        try c.encode(capacityKiB, forKey: .capacityKiB)
        try c.encode(freeKiB, forKey: .freeKiB)
        try c.encode(freeImages, forKey: .freeImages)
    }
}

/// A camera that reports its storage (a round trip: never on a shot's path), and where
/// its frames go.
public protocol StorageReporting: AnyObject {
    func storage() throws(CameraError) -> [CameraStorage]
    /// The folder each frame is copied to on this machine, if they are copied.
    var downloadFolder: String? { get }
    /// Whether each frame stays on the camera's card (false: it lives in the camera's
    /// memory only until it is copied).
    var keepsFramesOnCard: Bool { get }
}

/// A camera that measures its frames (the gphoto2 camera's downloads, the simulated
/// camera's scene): the shot runner logs each measure and a ramp follows it.
public protocol ImageReporting: AnyObject {
    /// Called (on the camera's thread) with each frame's measure.
    func onImage(_ handler: @escaping @Sendable (ShotLogImage) -> Void)
    /// Waits, at most `seconds`, until every frame shot so far has reported its measures
    /// (a download still under way when a program ends). A slow download is not a fault.
    func waitForImages(within seconds: Double)
}
