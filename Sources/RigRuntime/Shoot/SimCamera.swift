import RigCore
import Synchronization

/// The simulated camera (`"camera": {"type": "sim"}`): takes no picture, records how
/// many shots it was asked for. The player times its shots (`reportsShotDone` false),
/// so a simulated run is deterministic and follows `--speed`.
public final class SimCamera: Camera {
    private let shots = Mutex(0)
    private let closed = Atomic<Bool>(false)

    public init() {}

    public var label: String { "sim camera" }
    public var reportsShotDone: Bool { false }

    public func shoot(timing: ShotTiming, done: @escaping @Sendable (Result<Void, CameraError>) -> Void) {
        guard !closed.load(ordering: .relaxed) else { return done(.failure(CameraError("the camera is closed"))) }
        shots.withLock { $0 += 1 }
        done(.success(()))
    }

    /// Shots asked for so far.
    public var shotCount: Int { shots.withLock { $0 } }

    public func close() { closed.store(true, ordering: .relaxed) }
}
