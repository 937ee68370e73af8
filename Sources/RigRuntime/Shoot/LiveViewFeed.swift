import Dispatch
import RigFormat
import Synchronization

/// A camera's live view between the camera's thread and its viewers: the camera publishes
/// each frame once, and every viewer has a slot of one (`LiveViewSlot`) that the newest
/// frame replaces, so a slow viewer sees fewer frames, never older ones, and never makes
/// another wait. The camera runs its live view while `isWanted` (a viewer is there and
/// the feed is not closed), and is woken when that may have changed.
public final class LiveViewFeed: Sendable {
    /// What the live view is doing, for the status.
    public enum State: Sendable, Equatable {
        /// Nobody watches (the camera's viewfinder is released).
        case off
        /// Frames are coming.
        case on
        /// A shot is under way: frames come again once the camera confirmed it.
        case paused
        /// Frames were coming and have stopped for longer than `stallSeconds` (a camera that
        /// hangs or stopped answering): said once; `on` again with the next frame.
        case stalled(String)
        /// The camera cannot show what it sees (libgphoto2's -6): said once, never retried.
        case unsupported(String)
        /// The camera's last try failed; it tries again while someone watches.
        case failed(String)
        /// The run ended: no more frames.
        case closed

        /// The word the status uses.
        public var word: String {
            switch self {
            case .off: "off"
            case .on: "on"
            case .paused: "paused"
            case .stalled: "stalled"
            case .unsupported: "unsupported"
            case .failed: "failed"
            case .closed: "closed"
            }
        }

        /// Why there are no frames, for a person.
        public var problem: String? {
            switch self {
            case .unsupported(let why), .failed(let why), .stalled(let why): why
            case .closed: "the run has ended"
            default: nil
            }
        }
    }

    /// The line for a camera that has no live view at all.
    public static let noLiveView = "this camera has no live view"

    private struct Shared {
        var state: State = .off
        var slots: [ObjectIdentifier: LiveViewSlot] = [:]
        var newest: LiveViewFrame?
        var published = 0
        /// When the newest frame was published (CLOCK_MONOTONIC, ns).
        var publishedAt: UInt64 = 0
    }

    private let shared = Mutex(Shared())
    private let wakeHandler = Mutex<(@Sendable () -> Void)?>(nil)
    private let changeHandler = Mutex<(@Sendable () -> Void)?>(nil)
    private let noteHandler = Mutex<(@Sendable (String) -> Void)?>(nil)
    /// How long frames may stop, while they were coming and someone watches, before the
    /// live view is `stalled`.
    public let stallSeconds: Double

    public init(state: State = .off, stallSeconds: Double = 2) {
        self.stallSeconds = stallSeconds
        shared.withLock { $0.state = state }
    }

    /// Called (any thread) with the one line when the frames stall, and when they come
    /// again: the server logs it.
    public func onNote(_ handler: @escaping @Sendable (String) -> Void) {
        noteHandler.withLock { $0 = handler }
    }

    /// The camera's side: `wake` is called (any thread, never under the feed's lock) when
    /// `isWanted` may have changed.
    public func onWake(_ wake: @escaping @Sendable () -> Void) {
        wakeHandler.withLock { $0 = wake }
    }

    /// Called (any thread) when `state` changes: the server's status follows it.
    public func onChange(_ handler: @escaping @Sendable () -> Void) {
        changeHandler.withLock { $0 = handler }
    }

    /// A viewer is there and the feed is open (nor unsupported): the camera should run its
    /// live view.
    public var isWanted: Bool {
        shared.withLock { s in
            switch s.state {
            case .unsupported, .closed: false
            default: !s.slots.isEmpty
            }
        }
    }

    public var state: State { shared.withLock { $0.state } }
    public var viewerCount: Int { shared.withLock { $0.slots.count } }
    /// The newest frame while the live view is on (nil when off).
    public var newestFrame: LiveViewFrame? { shared.withLock { $0.newest } }
    /// Frames published so far.
    public var publishedCount: Int { shared.withLock { $0.published } }

    /// A new viewer's slot (it gets the newest frame at once while the live view is on),
    /// or nil when there will be no frames (`state` says why).
    public func join() -> LiveViewSlot? {
        let slot = LiveViewSlot()
        let joined = shared.withLock { s -> Bool in
            switch s.state {
            case .unsupported, .closed: return false
            default: break
            }
            s.slots[ObjectIdentifier(slot)] = slot
            // While stalled too: the last picture, not a blank page.
            if let newest = s.newest, s.state == .on || s.state.word == "stalled" { slot.put(newest) }
            return true
        }
        guard joined else { return nil }
        wake()
        return slot
    }

    /// The viewer is gone (its slot is closed); the last one out stops the live view.
    public func leave(_ slot: LiveViewSlot) {
        slot.close()
        let empty = shared.withLock { s -> Bool in
            s.slots[ObjectIdentifier(slot)] = nil
            return s.slots.isEmpty
        }
        if empty { wake() }
    }

    /// The camera's newest frame, to every viewer's slot (replacing one it has not taken).
    public func publish(_ frame: LiveViewFrame) {
        let now = LiveViewFrame.now()
        let (changed, stalledFor) = shared.withLock { s -> (Bool, Double?) in
            guard s.state != .closed else { return (false, nil) }
            let stalledFor = s.state.word == "stalled" ? Double(now &- s.publishedAt) / 1e9 : nil
            s.newest = frame
            s.published += 1
            s.publishedAt = now
            for slot in s.slots.values { slot.put(frame) }
            defer { s.state = .on }
            return (s.state != .on, stalledFor)
        }
        if let stalledFor { noteHandler.withLock { $0 }?("live view: frames again after \(fixed(stalledFor, 1)) s") }
        if changed { changeHandler.withLock { $0 }?() }
    }

    /// Whether the frames have stalled: while the live view is on and someone watches, no
    /// frame for longer than `stallSeconds` makes it `stalled`, said once (the note and the
    /// status); the next frame makes it `on` again. Asked by each viewer's stream while it
    /// waits (any thread); true while stalled.
    @discardableResult
    public func checkStall(now: UInt64 = LiveViewFrame.now()) -> Bool {
        let line = shared.withLock { s -> String? in
            guard s.state == .on, !s.slots.isEmpty, s.publishedAt > 0, now > s.publishedAt else { return nil }
            let quiet = Double(now - s.publishedAt) / 1e9
            guard quiet > stallSeconds else { return nil }
            let line = "live view: the camera has sent no frame for \(fixed(quiet, 1)) s; the stream waits for it (shots go on)"
            s.state = .stalled(line)
            return line
        }
        if let line {
            noteHandler.withLock { $0 }?(line)
            changeHandler.withLock { $0 }?()
        }
        return state.word == "stalled"
    }

    /// The camera's state (paused for a shot, off, failed, unsupported). Unsupported ends
    /// every viewer's stream (there will be no frames); a closed feed stays closed.
    public func set(_ state: State) {
        let (changed, ended) = shared.withLock { s -> (Bool, [LiveViewSlot]) in
            guard s.state != .closed, s.state != state else { return (false, []) }
            if case .unsupported = s.state { return (false, []) }
            s.state = state
            if state == .off { s.newest = nil }
            switch state {
            case .unsupported, .closed:
                defer { s.slots = [:] }
                return (true, Array(s.slots.values))
            default: return (true, [])
            }
        }
        for slot in ended { slot.close() }
        if changed {
            changeHandler.withLock { $0 }?()
            wake()
        }
    }

    /// The run ended: every viewer's stream ends and the camera stops its live view.
    public func close() { set(.closed) }

    private func wake() { wakeHandler.withLock { $0 }?() }
}

/// One viewer's slot of one frame: `put` replaces a frame not yet taken, so the viewer
/// never has more than one waiting and always gets the newest (`skipped` counts the
/// ones it never saw). Taken from Swift concurrency (`next()`) or a plain thread
/// (`next(within:)`).
public final class LiveViewSlot: Sendable {
    private enum Waiter {
        case task(CheckedContinuation<LiveViewFrame?, Never>)
        case thread(DispatchSemaphore)
    }

    private struct State {
        var frame: LiveViewFrame?
        var waiter: Waiter?
        var closed = false
        var skipped = 0
        var delivered = 0
    }

    private let state = Mutex(State())

    public init() {}

    /// Frames waiting: 0 or 1, whatever the camera publishes.
    public var pending: Int { state.withLock { $0.frame == nil ? 0 : 1 } }
    /// Frames replaced before the viewer took them.
    public var skipped: Int { state.withLock { $0.skipped } }
    /// Frames the viewer took.
    public var delivered: Int { state.withLock { $0.delivered } }
    public var isClosed: Bool { state.withLock { $0.closed } }

    /// The newest frame, to the waiting viewer at once or into the slot.
    public func put(_ frame: LiveViewFrame) {
        let waiter = state.withLock { s -> Waiter? in
            guard !s.closed else { return nil }
            if let waiter = s.waiter, case .task = waiter {
                s.waiter = nil
                s.delivered += 1
                return waiter
            }
            if s.frame != nil { s.skipped += 1 }
            s.frame = frame
            let waiter = s.waiter
            s.waiter = nil
            return waiter
        }
        switch waiter {
        case .task(let continuation): continuation.resume(returning: frame)
        case .thread(let semaphore): semaphore.signal()
        case nil: break
        }
    }

    /// Ends the stream: a waiting viewer gets nil.
    public func close() {
        let waiter = state.withLock { s -> Waiter? in
            s.closed = true
            s.frame = nil
            defer { s.waiter = nil }
            return s.waiter
        }
        switch waiter {
        case .task(let continuation): continuation.resume(returning: nil)
        case .thread(let semaphore): semaphore.signal()
        case nil: break
        }
    }

    /// The next frame (the newest since the last one taken); nil once the slot is closed
    /// (the viewer left, the task was cancelled, the camera has no live view, the run ended).
    public func next() async -> LiveViewFrame? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<LiveViewFrame?, Never>) in
                if let ready = take(orWait: .task(continuation)) { continuation.resume(returning: ready) }
            }
        } onCancel: {
            close()
        }
    }

    /// The frame waiting (taken), nil in it once the slot is closed; or none yet, and
    /// `waiter` is told when one comes.
    private func take(orWait waiter: Waiter) -> LiveViewFrame?? {
        state.withLock { s -> LiveViewFrame?? in
            if s.closed { return .some(nil) }
            if let frame = s.frame {
                s.frame = nil
                s.delivered += 1
                return .some(frame)
            }
            s.waiter = waiter
            return .none
        }
    }

    /// The next frame, waiting at most `seconds` on this thread; nil when none came or
    /// the slot is closed.
    public func next(within seconds: Double) -> LiveViewFrame? {
        let deadline = DispatchTime.now() + seconds
        while true {
            let semaphore = DispatchSemaphore(value: 0)
            if let ready = take(orWait: .thread(semaphore)) { return ready }
            if semaphore.wait(timeout: deadline) == .timedOut {
                state.withLock { s in
                    if case .thread(let waiting) = s.waiter, waiting === semaphore { s.waiter = nil }
                }
                return nil
            }
        }
    }
}
