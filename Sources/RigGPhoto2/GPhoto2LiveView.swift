import Dispatch
import FoundationEssentials
import Glibc
import Logging
import RigRuntime
import Synchronization

/// The gphoto2 camera's live view: a thread of its own that asks the camera's worker for
/// one `capture_preview` frame after another (each call bounded like every other: a call
/// that hangs gives the camera up for the run), stamps the camera's JPEG and publishes it,
/// while someone watches and no shot is under way. A camera without live view (libgphoto2's
/// -6, the virtual camera's answer) is said once (`unsupported`), never retried; another
/// failure is shown and tried again once a second while someone watches. When nobody
/// watches, or the run ends, the viewfinder is released.
final class GPhoto2LiveView: Sendable {
    let feed = LiveViewFeed()
    private let worker: GPhoto2Worker
    private let logger: Logger
    /// Shots under way: the live view waits for them.
    private let shots = Atomic<Int>(0)
    private let wake = DispatchSemaphore(value: 0)
    private let started = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)
    private let frames = Atomic<Int>(0)
    /// How long one preview call may take (a camera that answers slower has hung).
    static let callSeconds = 10.0
    /// At most this many frames a second (a camera that answers at once must not spin).
    static let maxFramesPerSecond = 30.0

    init(worker: GPhoto2Worker, logger: Logger) {
        self.worker = worker
        self.logger = logger
        feed.onWake { [weak self] in self?.poke() }
    }

    /// A shot is about to be queued: the live view stops after its frame under way.
    func pauseForShot() {
        shots.add(1, ordering: .acquiringAndReleasing)
        if feed.state == .on { feed.set(.paused) }
    }

    /// The camera confirmed the shot (or gave up on it): frames come again.
    func resumeAfterShot() {
        shots.subtract(1, ordering: .acquiringAndReleasing)
        wake.signal()
    }

    /// The run ended: the feed closes, and the thread releases the viewfinder (waited for
    /// at most `seconds`) before the camera closes.
    func finish(within seconds: Double) {
        feed.close()
        guard started.load(ordering: .acquiring) else { return }
        wake.signal()
        _ = finished.wait(timeout: .now() + seconds)
    }

    /// One frame now, outside any run (`rig camera preview`), the viewfinder released after.
    func oneFrame(within seconds: Double) throws(CameraError) -> LiveViewFrame {
        let result = worker.run(within: seconds, "live view") { device -> Result<(bytes: [UInt8], at: UInt64), GPhoto2Error> in
            defer { device.releaseViewfinder() }
            do throws(GPhoto2Error) { return .success((try device.capturePreview(), LiveViewFrame.now())) } catch { return .failure(error) }
        }
        switch result {
        case .failure(let error): throw error
        case .success(.failure(let error)): throw CameraError(Self.explain(error))
        case .success(.success(let frame)):
            guard let stamped = LiveViewFrame.stamped(frame.bytes, number: 1, capturedNanoseconds: frame.at) else {
                throw CameraError("the camera's live-view frame is not a JPEG (\(frame.bytes.count) bytes)")
            }
            return stamped
        }
    }

    private static func explain(_ error: GPhoto2Error) -> String {
        GPhoto2Device.isUnsupported(error) ? "\(LiveViewFeed.noLiveView) (libgphoto2: \(error.description))" : error.description
    }

    private func poke() {
        if !started.exchange(true, ordering: .acquiringAndReleasing) {
            SystemThread.start(name: "rig-gphoto2-liveview") { [self] in
                run()
                finished.signal()
            }
        }
        wake.signal()
    }

    private func run() {
        // The viewfinder is up (a frame was asked for) and must be released when it stops.
        var engaged = false
        var lastProblem: String?
        let minimumGap = 1 / Self.maxFramesPerSecond
        while true {
            switch feed.state {
            case .closed, .unsupported:
                if engaged { release() }
                return
            default: break
            }
            if let stuck = worker.stuck {
                feed.set(.failed(stuck))
                return
            }
            let shooting = shots.load(ordering: .acquiring) > 0
            guard feed.isWanted, !shooting else {
                // Between shots the camera keeps its live view; nobody watching releases it.
                if !feed.isWanted {
                    if engaged { release() }
                    engaged = false
                    feed.set(.off)
                }
                wake.wait()
                continue
            }
            let began = DispatchTime.now()
            engaged = true
            let result = worker.run(within: Self.callSeconds, "live view") { device -> Result<(bytes: [UInt8], at: UInt64), GPhoto2Error> in
                do throws(GPhoto2Error) { return .success((try device.capturePreview(), LiveViewFrame.now())) } catch { return .failure(error) }
            }
            var problem: String?
            switch result {
            case .failure(let error): problem = error.description
            case .success(.failure(let error)) where GPhoto2Device.isUnsupported(error):
                engaged = false
                let line = Self.explain(error)
                logger.notice("camera: \(line)")
                feed.set(.unsupported(line))
                return
            case .success(.failure(let error)): problem = error.description
            case .success(.success(let frame)):
                let number = frames.add(1, ordering: .relaxed).newValue
                if let stamped = LiveViewFrame.stamped(frame.bytes, number: number, capturedNanoseconds: frame.at) {
                    // A shot queued meanwhile: this frame is from before it, still true.
                    feed.publish(stamped)
                    if shots.load(ordering: .acquiring) > 0 { feed.set(.paused) }
                    lastProblem = nil
                } else {
                    problem = "the camera's live-view frame is not a JPEG (\(frame.bytes.count) bytes)"
                }
            }
            if let problem {
                if problem != lastProblem { logger.warning("camera: live view: \(problem); trying again while someone watches") }
                lastProblem = problem
                feed.set(.failed(problem))
                _ = wake.wait(timeout: .now() + 1)
                continue
            }
            let due = began + minimumGap
            if DispatchTime.now() < due { _ = wake.wait(timeout: due) }
        }
    }

    private func release() {
        _ = worker.run(within: Self.callSeconds, "releasing the viewfinder") { device in device.releaseViewfinder() }
    }
}
