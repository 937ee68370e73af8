import RigCore
import Synchronization

/// The recorded program as the preview plays it, between the session (which owns the
/// recording) and the jog source on the loop thread. The loop allocates nothing for a
/// preview: at rest it asks for one from its pose (`request`), the session's thread builds
/// the program's player from that pose (`prepareRequested`), and the loop takes it
/// (`takeReady`) and plays it as it is.
public final class PreviewSlot: Sendable {
    private struct State {
        var motion: Motion?
        /// Where the rig rests for the preview asked for (`requested`); its storage is
        /// reserved off the loop thread, so a request copies values, never allocates.
        var pose: [Double] = []
        var requested = false
        /// Counts requests and cancels: a program built for an older one is not kept.
        var generation = 0
        var ready: HostedProgram?
    }
    private let state = Mutex(State())

    public init() {}

    /// The recording changed (nil: nothing recorded).
    public func set(_ value: Motion?) { state.withLock { $0.motion = value } }

    public var current: Motion? { state.withLock { $0.motion } }

    /// Makes room for an `axisCount`-axis pose (before the loop starts).
    public func reserve(axisCount: Int) {
        state.withLock { $0.pose = [Double](repeating: 0, count: axisCount) }
    }

    /// Loop thread: a preview from `pose` (where the rig rests) is wanted. False when there
    /// is nothing to preview.
    public func request(from pose: [Double]) -> Bool {
        state.withLock { s in
            guard s.motion != nil, s.pose.count == pose.count else { return false }
            for i in pose.indices { s.pose[i] = pose[i] }
            s.requested = true
            s.generation &+= 1
            s.ready = nil
            return true
        }
    }

    /// Loop thread: the preview asked for is not wanted any more.
    public func cancel() {
        state.withLock { s in
            s.requested = false
            s.generation &+= 1
            s.ready = nil
        }
    }

    /// Loop thread: the preview program, built from the requested pose, once it is ready.
    public func takeReady() -> HostedProgram? {
        state.withLock { s in
            guard s.requested, let program = s.ready else { return nil }
            s.ready = nil
            s.requested = false
            return program
        }
    }

    /// The session's thread: builds the requested preview (the recording as a program,
    /// every step at once, no park) and its player from the requested pose. Does nothing
    /// without a request or when one is ready.
    public func prepareRequested(rig: Rig) {
        guard
            let (motion, pose, generation) = state.withLock({ s -> (Motion, [Double], Int)? in
                guard s.requested, s.ready == nil, let motion = s.motion else { return nil }
                return (motion, Array(s.pose), s.generation)
            })
        else { return }
        var program = HostedProgram(name: "preview", motion: motion, trigger: .auto)
        program.parks = false
        program.prepare(rig: rig, from: pose)
        state.withLock { s in
            if s.requested, s.generation == generation { s.ready = program }
        }
    }
}
