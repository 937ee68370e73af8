import Dispatch
import FoundationEssentials
import Glibc
import RigRuntime
import Synchronization

/// The one thread that talks to a camera through libgphoto2 (its calls block and are not
/// thread-safe per camera). Whoever waits on a call waits a bounded time: a call that does
/// not return in time (a hung USB transfer) leaves the worker marked stuck, and every later
/// call fails at once instead of queueing behind it.
final class GPhoto2Worker: Sendable {
    private let queue = DispatchQueue(label: "rig.gphoto2")
    private let device: Mutex<GPhoto2Device?>
    private let stuckSince = Mutex<String?>(nil)

    init(_ device: GPhoto2Device) {
        self.device = Mutex(device)
    }

    /// Why the worker gave up on the camera, if it did.
    var stuck: String? { stuckSince.withLock { $0 } }

    /// Runs `body` on the worker and waits at most `seconds` for it.
    func run<T: Sendable>(within seconds: Double, _ what: String, _ body: @escaping @Sendable (GPhoto2Device) throws(GPhoto2Error) -> T) -> Result<
        T, CameraError
    > {
        if let stuck { return .failure(CameraError(stuck)) }
        let box = Mutex<Result<T, CameraError>?>(nil)
        let finished = DispatchSemaphore(value: 0)
        enqueue(what) { device in
            let result: Result<T, CameraError>
            do throws(GPhoto2Error) { result = .success(try body(device)) } catch { result = .failure(CameraError(error.description)) }
            box.withLock { $0 = result }
            finished.signal()
        } closed: {
            box.withLock { $0 = .failure(CameraError("the camera is closed")) }
            finished.signal()
        }
        guard finished.wait(timeout: .now() + seconds) == .success else {
            return .failure(markStuck("\(what): the camera has not answered in \(Int(seconds.rounded())) s"))
        }
        return box.withLock { $0 } ?? .failure(CameraError("\(what): no result"))
    }

    /// Queues `body` without waiting (a shot: its caller bounds it with a watchdog).
    func enqueue(_ what: String, _ body: @escaping @Sendable (GPhoto2Device) -> Void, closed: @escaping @Sendable () -> Void) {
        queue.async { [self] in
            // The device is only ever used here, on the worker's thread.
            guard let open = device.withLock({ $0 }) else { return closed() }
            body(open)
        }
    }

    /// Waits, at most `seconds`, until everything queued before now has run. Makes no
    /// call: a slow download is not a stuck camera.
    func drain(within seconds: Double) {
        let done = DispatchSemaphore(value: 0)
        queue.async { done.signal() }
        _ = done.wait(timeout: .now() + seconds)
    }

    /// Gives up on the camera: later calls fail at once with `message`.
    @discardableResult
    func markStuck(_ message: String) -> CameraError {
        let text = stuckSince.withLock { current -> String in
            let text = current ?? "\(message) (unplugged, switched off, or hung: the rig stopped talking to it)"
            current = text
            return text
        }
        return CameraError(text)
    }

    /// Closes the camera on the worker (after any call under way), waiting at most `seconds`.
    func close(within seconds: Double) {
        let done = DispatchSemaphore(value: 0)
        queue.async { [self] in
            let open = device.withLock { d -> GPhoto2Device? in
                defer { d = nil }
                return d
            }
            open?.close()
            done.signal()
        }
        _ = done.wait(timeout: .now() + seconds)
    }
}
