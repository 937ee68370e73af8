import Dispatch
import FoundationEssentials
import Glibc
import RigCore
import RigRuntime
import Synchronization

/// Fires a camera through its remote port (`"camera": {"type": "gpio"}`): focus (a
/// half-press that also wakes the camera), then shutter, held for the shutter time (the
/// exposure in bulb mode), released, and the shot reported done once the exposure is
/// over. Shots run one at a time on a thread of their own; `close()` opens both contacts
/// at once, even mid-shot, and releases the lines. A session part: the session locks its
/// lines with the output's, then `start` requests them.
public final class GPIOCamera: Camera, @unchecked Sendable {
    /// The lines, once requested (`start`), or given (tests).
    private var lines: CameraLines?
    private let openLines: (() throws -> CameraLines)?
    private let config: GPIOCameraConfig
    private let queue = DispatchQueue(label: "rig.camera")
    private let lock = Mutex<Void>(())
    private var closed = false
    /// Signalled by `close()`: wakes a shot waiting out its focus or exposure.
    private let abort = DispatchSemaphore(value: 0)

    /// A camera on lines already open (tests): nothing to lock or request.
    public init(config: GPIOCameraConfig, lines: CameraLines) {
        self.config = config
        self.lines = lines
        openLines = nil
    }

    /// The configured lines, requested through libgpiod by `start` (after the session has
    /// locked them against other rig processes).
    public init(config: GPIOCameraConfig) {
        self.config = config
        openLines = { try LibgpiodCameraLines(config: config) }
    }

    /// Every line it requests, when it requests them itself.
    public var exclusiveResources: [String] { openLines == nil ? [] : config.lockNames }

    public func start() throws {
        try lock.withLock { _ in
            guard lines == nil, !closed, let openLines else { return }
            lines = try openLines()
        }
    }

    public var isClosed: Bool { lock.withLock { _ in closed } }

    public var label: String {
        "gpio \(config.chip) shutter \(config.shutterLine)" + (config.focusLine.map { " focus \($0)" } ?? "")
    }

    public var reportsShotDone: Bool { true }
    public var firesAtTime: Bool { true }

    public func shoot(_ request: ShotRequest, done: @escaping @Sendable (Result<ShotReport, CameraError>) -> Void) {
        // A group's shot closes the shutter at an instant: on a thread of its own with the
        // loop's real-time priority (a GCD worker's is not ours to change). One at a time
        // all the same: the rig holds still until the exposure is over.
        if request.shutterAtNs != nil {
            SystemThread.start(name: "rig-gpio-shot") { [self] in
                RealtimeSetup.applyToShotThread()
                run(request, done: done)
            }
        } else {
            queue.async { [self] in run(request, done: done) }
        }
    }

    private func run(_ request: ShotRequest, done: @escaping @Sendable (Result<ShotReport, CameraError>) -> Void) {
        do {
            var report = ShotReport.none
            report.edgeNs = try sequence(request.timing, shutterAtNs: request.shutterAtNs)
            done(.success(report))
        } catch let error as CameraError {
            release()
            done(.failure(error))
        } catch {
            release()
            done(.failure(CameraError("\(error)")))
        }
    }

    /// Focus → shutter → hold → release → the rest of the exposure; returns when the
    /// shutter contact closed (UTC ns). With `shutterAtNs` (a group's shot) the shutter
    /// closes then, on the wall clock, and the focus its time before (at once when that
    /// has passed). Throws when closed mid-way (the caller has stopped; nothing is
    /// reported) or a line fails.
    private func sequence(_ timing: ShotTiming, shutterAtNs: Int64? = nil) throws -> Int64 {
        if let shutterAtNs { try wait(untilNanoseconds: shutterAtNs - Int64(timing.focusSeconds * 1e9)) }
        try locked { try $0.setFocus(true) }
        if let shutterAtNs { try wait(untilNanoseconds: shutterAtNs) } else { try wait(timing.focusSeconds) }
        var edge: Int64 = 0
        try locked {
            try $0.setShutter(true)
            edge = WallClock.nanoseconds()
        }
        try wait(timing.shutterHoldSeconds)
        try locked { try $0.setShutter(false) }
        try wait(timing.exposureWindowSeconds - timing.shutterHoldSeconds)
        try locked { try $0.setFocus(false) }
        return edge
    }

    /// Waits to UTC nanosecond `ns` on the wall clock, or less if `close()` comes first
    /// (then throws): the close can cut the wait short until the last 2 ms, which are
    /// slept on the realtime clock to the absolute time.
    private func wait(untilNanoseconds ns: Int64) throws {
        let margin: Int64 = 2_000_000
        let early = ns - margin - WallClock.nanoseconds()
        if early > 0 { try wait(Double(early) / 1e9) }
        WallClock.sleep(untilNanoseconds: ns)
        if isClosed { throw CameraError("the camera was closed mid-shot") }
    }

    private func locked(_ body: (CameraLines) throws -> Void) throws {
        try lock.withLock { _ in
            guard !closed else { throw CameraError("the camera was closed mid-shot") }
            guard let lines else { throw CameraError("the camera's lines are not open (the session starts the camera)") }
            try body(lines)
        }
    }

    /// Waits `seconds`, or less if `close()` comes first (then throws).
    private func wait(_ seconds: Double) throws {
        guard seconds > 0 else { return }
        if abort.wait(timeout: .now() + seconds) == .success {
            abort.signal()  // for any later waiter
            throw CameraError("the camera was closed mid-shot")
        }
    }

    /// Opens both contacts (after a failed line, the other must not stay closed).
    private func release() {
        lock.withLock { _ in
            guard !closed else { return }
            try? lines?.setShutter(false)
            try? lines?.setFocus(false)
        }
    }

    public func close() {
        lock.withLock { _ in
            guard !closed else { return }
            closed = true
            abort.signal()
            lines?.close()
        }
    }
}
