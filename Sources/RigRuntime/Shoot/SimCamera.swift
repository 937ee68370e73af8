import FoundationEssentials
import Glibc
import RigCore
import RigFormat
import RigSky
import Synchronization

/// The simulated camera (`"camera": {"type": "sim"}`): takes no picture, records how
/// many shots it was asked for. The player times its shots (`reportsShotDone` false),
/// so a simulated run is deterministic and follows `--speed`. With `"preview"` it has a
/// live view: its test scene (`SimScenePainter`) at the rig's pose, and an AF point a tap
/// moves (its frames show the focus by their sharpness).
public final class SimCamera: Camera, ImageReporting, LiveViewSource, FocusPointSource {
    private let shots = Mutex(0)
    private let closed = Atomic<Bool>(false)
    /// The light it "sees": each shot with an exposure is measured against it.
    public let scene: SimScene?
    /// Its shutter speeds, in stops (`"shutterStepEV"`): whole multiples of this from 1 s
    /// (1: 1, 1/2, 1/4 s…), the nearest taken, as a real camera takes the nearest of its
    /// own choices; nil: any time asked for (the rig timing it).
    public let shutterStepEV: Double?
    private let imageHandler = Mutex<(@Sendable (ShotLogImage) -> Void)?>(nil)

    private let preview: SimLiveView?
    private let previewConfig: SimPreviewConfig?
    /// Without `"preview"`: unsupported from the start.
    private let noPreview = LiveViewFeed(
        state: .unsupported("\(LiveViewFeed.noLiveView) (a \"sim\" camera shows its test scene with \"preview\": {\"fps\": 10})"))

    /// - Parameters:
    ///   - preview: its live view, if it has one.
    ///   - axisNames: the rig's axes (the live view looks along "pan" and "tilt", else
    ///     the first two), and `restPose` where they are before the loop runs.
    public init(
        scene: SimScene? = nil, preview: SimPreviewConfig? = nil, axisNames: [String] = [], restPose: [Double] = [],
        shutterStepEV: Double? = nil
    ) {
        self.scene = scene
        self.shutterStepEV = shutterStepEV
        self.preview = preview.map { SimLiveView(config: $0, axisNames: axisNames, restPose: restPose) }
        previewConfig = preview
    }

    public var liveView: LiveViewFeed { preview?.feed ?? noPreview }

    public func follow(pose: @escaping @Sendable () -> CameraPose?) { preview?.follow(pose: pose) }
    public var liveViewFieldOfViewDegrees: Double? { previewConfig?.fieldOfViewDegrees }

    public var focusPointProblem: String? {
        preview == nil ? "this camera has no live view to tap (a \"sim\" camera focuses with \"preview\")" : nil
    }

    /// Moves its AF point to the view's point, in its sensor's pixels (`"afGrid"`), and
    /// focuses on what lies there.
    public func focus(viewX x: Double, viewY y: Double, viewAspect: Double) throws(CameraError) -> FocusReport {
        guard let preview, let grid = previewConfig?.focusGrid else { throw CameraError(focusPointProblem ?? "no live view", refused: true) }
        let point = grid.point(viewX: x, viewY: y, viewAspect: viewAspect)
        let diopters = preview.focus(cameraX: point.x, cameraY: point.y)
        let metres = diopters > 0 ? fixed(1 / diopters, 2) + " m" : "infinity"
        return FocusReport(grid: grid, cameraX: point.x, cameraY: point.y, setting: "afpoint=\(point.x),\(point.y) (focused at \(metres))", focused: true)
    }

    /// One live-view frame drawn now (`rig camera preview`), whether or not anyone watches.
    public func previewFrame() -> LiveViewFrame? { preview?.frame() }

    /// "Busy" answers its live view gave to frames asked for during shots (`faults`).
    public var liveViewBusyAnswers: Int { preview?.busyAnswers ?? 0 }

    /// Called with each shot's measure (a scene and an exposure).
    public func onImage(_ handler: @escaping @Sendable (ShotLogImage) -> Void) {
        imageHandler.withLock { $0 = handler }
    }

    /// Measured as it shoots: nothing is ever pending.
    public func waitForImages(within seconds: Double) {}

    public var label: String { "sim camera" }
    public var reportsShotDone: Bool { false }

    public func shoot(_ request: ShotRequest, done: @escaping @Sendable (Result<ShotReport, CameraError>) -> Void) {
        guard !closed.load(ordering: .relaxed) else { return done(.failure(CameraError("the camera is closed"))) }
        let frame = shots.withLock { count in
            count += 1
            return count
        }
        // Its live view is busy while the shot is: until the player's time for it is up.
        preview?.pauseForShot(seconds: request.exposure.map { request.timing.shotSeconds(exposure: $0.shutterSeconds) } ?? request.timing.shotSeconds)
        var report = ShotReport.none
        if let asked = request.exposure {
            // What it makes: its nearest speed, measured and reported as made.
            let exposure = made(asked)
            report.settings = Self.settings(exposure)
            if let scene, let handler = imageHandler.withLock({ $0 }) {
                let brightness = scene.brightness(frame: frame, at: request.runSeconds, settings: exposure)
                let level = min(1, max(0, 0.4627 * pow(2, brightness / 2.2)))
                handler(
                    ShotLogImage(
                        step: request.step + 1, bracket: request.timing.shotsPerStep > 1 ? request.bracket : nil, file: "sim-\(frame)",
                        meanLevel: level, brightnessEV: brightness, clippedHigh: scene.clippedHigh(brightness: brightness, at: request.runSeconds),
                        clippedLow: brightness < -4 ? 0.05 : 0))
            }
        }
        done(.success(report))
    }

    /// The exposure it makes of one asked for: the nearest of its shutter speeds.
    public func made(_ asked: ExposureSettings) -> ExposureSettings {
        guard let step = shutterStepEV, asked.shutterSeconds > 0 else { return asked }
        var made = asked
        made.shutterSeconds = pow(2, (log2(asked.shutterSeconds) / step).rounded() * step)
        return made
    }

    /// A ramp's settings as the shot log records them.
    public static func settings(_ exposure: ExposureSettings) -> [CameraSetting] {
        [
            CameraSetting("exposureSeconds", format((exposure.shutterSeconds * 1e6).rounded() / 1e6)),
            CameraSetting("iso", format(exposure.iso.rounded())), CameraSetting("aperture", "f/" + format((exposure.aperture * 10).rounded() / 10)),
        ]
    }

    /// Shots asked for so far.
    public var shotCount: Int { shots.withLock { $0 } }

    public func close() {
        closed.store(true, ordering: .relaxed)
        liveView.close()
    }
    public var isClosed: Bool { closed.load(ordering: .relaxed) }
}

extension SimCamera {
    public static let type = "sim"

    /// A `"type": "sim"` camera's section: the shared keys, `"scene"` — `"sunset"`,
    /// `"sunrise"` (EV 14 ↔ −4 over 90 minutes) or `[{"t": SECONDS, "ev": EV100}, …]` — the
    /// light its shots are measured against, and `"shutterStepEV"` (its speeds' step in
    /// stops, 1/3 or coarser: it makes the nearest, as a camera does).
    @discardableResult
    public static func checkConfig(_ camera: CameraConfig) throws(FileError) -> SimScene? {
        try parseConfig(camera).scene
    }

    /// The section's scene and `"preview"` (`SimPreviewConfig`: its live view).
    public static func parseConfig(_ camera: CameraConfig) throws(FileError) -> (
        scene: SimScene?, preview: SimPreviewConfig?, shutterStepEV: Double?
    ) {
        let object = try camera.section.object(sharedKeys: CameraConfig.sharedKeys)
        if let key = ["chip", "shutterLine", "focusLine", "activeLow"].first(where: object.has), let value = object.optional(key) {
            throw value.error("\"\(key)\" is for a \"gpio\" camera; a \"sim\" camera has no lines")
        }
        var scene: SimScene?
        if let value = object.optional("scene") {
            if case .string = value.node.value {
                scene = try value.oneOf(["sunset", "sunrise"]) == "sunset" ? .sunset : .sunrise
            } else {
                var keys: [(seconds: Double, ev: Double)] = []
                for key in try value.nonEmptyArray() {
                    let k = try key.object()
                    let t = try k.required("t", "seconds into the run").number(in: 0...604_800, unit: "s")
                    if let last = keys.last, t <= last.seconds {
                        throw key.error("t \(format(t)) s is not after \(format(last.seconds)) s; keys go in increasing time")
                    }
                    keys.append((t, try k.required("ev", "the scene's EV100").number(in: -20...25, unit: "EV")))
                    try k.finish()
                }
                scene = SimScene(keys: keys)
            }
        }
        var preview: SimPreviewConfig?
        if let value = object.optional("preview") { preview = try SimPreviewConfig.parse(value) }
        let step = try object.optional("shutterStepEV")?.number(in: 0.3...3, unit: "EV")
        try object.finish()
        return (scene, preview, step)
    }
}
