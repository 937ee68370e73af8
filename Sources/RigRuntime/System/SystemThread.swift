import CLinux
import Glibc

/// The one way rig starts a thread of its own (a POSIX thread, detached) and puts one to
/// sleep: what Foundation's `Thread` did, without full Foundation.
public enum SystemThread {
    /// Runs `body` on a new detached thread named `name` (the kernel keeps its first 15 bytes),
    /// with `stackSize` bytes of stack when given. Returns the `pthread_create` error, 0 when
    /// the thread started (as with Foundation's `Thread`, callers that cannot go on without
    /// the thread treat a failure as the thread having ended at once).
    @discardableResult
    public static func start(name: String, stackSize: Int? = nil, _ body: @escaping @Sendable () -> Void) -> Int32 {
        let box = Unmanaged.passRetained(Body(name: name, run: body)).toOpaque()
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        if let stackSize { pthread_attr_setstacksize(&attributes, max(stackSize, Int(PTHREAD_STACK_MIN))) }
        var thread = pthread_t()
        let result = pthread_create(
            &thread, &attributes,
            { raw in
                guard let raw else { return nil }
                let body = Unmanaged<Body>.fromOpaque(raw).takeRetainedValue()
                _ = rig_set_thread_name(body.name)
                body.run()
                return nil
            }, box)
        if result != 0 { Unmanaged<Body>.fromOpaque(box).release() }
        return result
    }

    /// Sleeps this thread for `seconds` (a signal does not cut it short).
    public static func sleep(seconds: Double) {
        guard seconds > 0, seconds.isFinite else { return }
        let whole = min(seconds.rounded(.down), 1e9)
        var request = timespec(tv_sec: Int(whole), tv_nsec: Int((seconds - whole) * 1e9))
        var remaining = timespec()
        while nanosleep(&request, &remaining) == -1, errno == EINTR { request = remaining }
    }

    private final class Body: Sendable {
        let name: String
        let run: @Sendable () -> Void
        init(name: String, run: @escaping @Sendable () -> Void) {
            self.name = name
            self.run = run
        }
    }
}
