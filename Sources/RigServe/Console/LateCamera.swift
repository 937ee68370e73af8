import Dispatch
import FoundationEssentials
import Glibc
import Logging
import RigCore
import RigRuntime
import Synchronization

/// The rig's camera for `rig serve` when it was not there at the start (off, asleep, not
/// plugged in): the server starts without it, says so (`state`), looks for it again every
/// few seconds, and from the moment it is found every shot, setting and measure goes to it.
/// Until then a shot fails with a message saying the camera is not connected (the program
/// stops, as for a camera that fails mid-run), and the server refuses to start a program
/// that shoots (`RigConsole.play`).
///
/// `@unchecked Sendable`: everything that changes is behind `state`; `connect` is only
/// called from the finder thread.
public final class LateCamera: SettableCamera, ImageReporting, BatteryReporting, StorageReporting, @unchecked Sendable {
    /// What the status says about the camera.
    public enum Presence: String, Sendable {
        case connected
        case missing = "not connected"
    }

    public let reportsShotDone: Bool
    private let open: @Sendable () throws -> Camera
    private let retrySeconds: Double
    private let logger: Logger
    private let onConnect: Mutex<(@Sendable () -> Void)?> = Mutex(nil)

    private struct State {
        var inner: Camera?
        var started = false
        var closed = false
        var lastProblem: String
        var imageHandler: (@Sendable (ShotLogImage) -> Void)?
        var plan: ExposurePlan?
    }

    private let state: Mutex<State>
    private let wake = DispatchSemaphore(value: 0)

    /// - Parameters:
    ///   - open: opens the camera (a short search, a few seconds at most) or throws why not.
    ///   - firstProblem: why it was not found at the start.
    public init(
        reportsShotDone: Bool, firstProblem: String, retrySeconds: Double = 3, logger: Logger,
        open: @escaping @Sendable () throws -> Camera
    ) {
        self.reportsShotDone = reportsShotDone
        self.open = open
        self.retrySeconds = retrySeconds
        self.logger = logger
        state = Mutex(State(lastProblem: firstProblem))
        SystemThread.start(name: "rig-camera-finder") { [self] in find() }
    }

    /// Calls `handler` (any thread) once the camera is found.
    public func onConnected(_ handler: @escaping @Sendable () -> Void) {
        onConnect.withLock { $0 = handler }
    }

    public var presence: Presence { state.withLock { $0.inner == nil ? .missing : .connected } }

    /// Why the camera is not there (the last search's error), while it is not.
    public var problem: String? { state.withLock { $0.inner == nil ? $0.lastProblem : nil } }

    private func find() {
        while true {
            if state.withLock({ $0.closed || $0.inner != nil }) { return }
            do {
                let camera = try open()
                let keep = state.withLock { s -> Bool in
                    guard !s.closed else { return false }
                    s.inner = camera
                    return true
                }
                guard keep else {
                    camera.close()
                    return
                }
                try attach(camera)
                logger.notice("camera: \(camera.label) found; shots go to it from now on")
                onConnect.withLock { $0 }?()
                return
            } catch {
                state.withLock { $0.lastProblem = "\(error)" }
            }
            _ = wake.wait(timeout: .now() + retrySeconds)
        }
    }

    /// Gives a camera found late what the session and the runs gave this one meanwhile.
    private func attach(_ camera: Camera) throws {
        let (started, handler, plan) = state.withLock { ($0.started, $0.imageHandler, $0.plan) }
        if started {
            do { try camera.start() } catch {
                state.withLock {
                    $0.inner = nil
                    $0.lastProblem = "\(error)"
                }
                camera.close()
                throw error
            }
        }
        if let handler { (camera as? ImageReporting)?.onImage(handler) }
        if let plan { (camera as? SettableCamera)?.prepare(plan) }
    }

    private var inner: Camera? { state.withLock { $0.inner } }

    /// The camera once found (its live view, if it has one); nil while it is not.
    public var found: Camera? { inner }

    public var label: String { inner?.label ?? "camera (not connected)" }

    public func shoot(_ request: ShotRequest, done: @escaping @Sendable (Result<ShotReport, CameraError>) -> Void) {
        guard let inner else {
            done(.failure(CameraError("the camera is not connected (\(state.withLock { $0.lastProblem }))")))
            return
        }
        inner.shoot(request, done: done)
    }

    public func close() {
        let inner = state.withLock { s -> Camera? in
            s.closed = true
            return s.inner
        }
        wake.signal()
        inner?.close()
    }

    public var isClosed: Bool { state.withLock { $0.closed } }

    public func start() throws {
        let inner = state.withLock { s -> Camera? in
            s.started = true
            return s.inner
        }
        try inner?.start()
    }

    public func choices() throws(CameraError) -> CameraChoices {
        guard let settable = inner as? SettableCamera else {
            throw CameraError("the camera is not connected (\(state.withLock { $0.lastProblem }))")
        }
        return try settable.choices()
    }

    public func prepare(_ exposure: ExposurePlan) {
        state.withLock { $0.plan = exposure }
        (inner as? SettableCamera)?.prepare(exposure)
    }

    public func onImage(_ handler: @escaping @Sendable (ShotLogImage) -> Void) {
        state.withLock { $0.imageHandler = handler }
        (inner as? ImageReporting)?.onImage(handler)
    }

    public func waitForImages(within seconds: Double) {
        (inner as? ImageReporting)?.waitForImages(within: seconds)
    }

    public var lastBattery: String? { (inner as? BatteryReporting)?.lastBattery }

    public func battery() -> String? { (inner as? BatteryReporting)?.battery() }

    public var downloadFolder: String? { (inner as? StorageReporting)?.downloadFolder }
    public var keepsFramesOnCard: Bool { (inner as? StorageReporting)?.keepsFramesOnCard ?? true }

    /// The found camera's cards; none while it is not found or does not report them.
    public func storage() throws(CameraError) -> [CameraStorage] {
        guard let reporting = inner as? StorageReporting else { return [] }
        return try reporting.storage()
    }
}
