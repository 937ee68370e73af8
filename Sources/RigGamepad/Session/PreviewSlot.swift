import RigCore
import Synchronization

/// The recorded program as the preview plays it, handed from the session (which owns
/// the recording) to the jog source on the loop thread.
public final class PreviewSlot: Sendable {
    private let motion = Mutex<Motion?>(nil)

    public init() {}

    public func set(_ value: Motion?) { motion.withLock { $0 = value } }

    public var current: Motion? { motion.withLock { $0 } }
}
