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

    public func shoot(_ request: ShotRequest, done: @escaping @Sendable (Result<ShotReport, CameraError>) -> Void) {
        guard !closed.load(ordering: .relaxed) else { return done(.failure(CameraError("the camera is closed"))) }
        shots.withLock { $0 += 1 }
        done(.success(.none))
    }

    /// Shots asked for so far.
    public var shotCount: Int { shots.withLock { $0 } }

    public func close() { closed.store(true, ordering: .relaxed) }
}

extension SimCamera {
    public static let type = "sim"

    /// A `"type": "sim"` camera has only the shared keys (its shot timing).
    public static func checkConfig(_ camera: CameraConfig) throws(FileError) {
        let object = try camera.section.object(sharedKeys: CameraConfig.sharedKeys)
        if let key = ["chip", "shutterLine", "focusLine", "activeLow"].first(where: object.has), let value = object.optional(key) {
            throw value.error("\"\(key)\" is for a \"gpio\" camera; a \"sim\" camera has no lines")
        }
        try object.finish()
    }
}
