import Synchronization

/// The hand-over point between the input side (a gamepad reader thread or the keyboard)
/// and the jog source on the loop thread: one small plain value behind a lock, so
/// neither side allocates or waits long.
public final class GamepadInput: Sendable {
    private let state = Mutex(GamepadSnapshot())

    public init() {}

    /// The latest snapshot.
    @inline(__always)
    public var snapshot: GamepadSnapshot { state.withLock { $0 } }

    /// Publishes a complete snapshot.
    @inline(__always)
    public func publish(_ snapshot: GamepadSnapshot) {
        state.withLock { $0 = snapshot }
    }

    /// Changes the snapshot in place (keyboard presses, disconnects).
    public func update(_ body: (inout GamepadSnapshot) -> Void) {
        state.withLock { body(&$0) }
    }
}
