import FoundationEssentials
import Glibc
import Hummingbird
import NIOCore
import Synchronization

/// `/api/events` for every client at once: one producer computes the status, decides what
/// to send (a change at most every 200 ms, the clock alone once a second, a heartbeat after
/// 0.5 s of nothing), encodes it once, and hands the same bytes to every waiting client. A
/// client only waits for the next frame and writes it: 200 phones cost one status a tick,
/// not 200.
///
/// The producer is driven by what happens, not by polling: `poke()` (a loop event, a
/// request that changed something) wakes it at once; while the rig moves it also looks
/// every `period` (the pose changes every tick, the events do not say so), and at rest
/// only for the heartbeat.
final class StatusFeed: Sendable {
    /// One message of the stream, shared by every client.
    struct Frame: Sendable {
        var version: Int
        var bytes: ByteBuffer
        /// A status (not a heartbeat), for a client's first message.
        var isStatus: Bool
    }

    private struct State {
        var latestStatus: Frame?
        var version = 0
        var waiters: [(after: Int, continuation: CheckedContinuation<Frame?, Never>)] = []
        var started = false
        var ended = false
    }

    /// A poke that came while the producer was busy, or the producer waiting for one.
    private struct Wake {
        var pending = false
        var waiter: CheckedContinuation<Void, Never>?
    }

    private let state = Mutex(State())
    private let wake = Mutex(Wake())
    private let status: @Sendable () -> ServeStatus
    private let ended: @Sendable () -> Bool
    private let now: @Sendable () -> Double
    /// How often the producer looks while the rig moves (no event says the pose changed).
    private let period: Duration
    /// How long it sleeps at rest without a poke: the heartbeat.
    private let restingPeriod: Duration

    init(
        period: Duration = .milliseconds(200), restingPeriod: Duration = .milliseconds(500), now: @escaping @Sendable () -> Double,
        ended: @escaping @Sendable () -> Bool, status: @escaping @Sendable () -> ServeStatus
    ) {
        self.period = period
        self.restingPeriod = max(restingPeriod, period)
        self.now = now
        self.ended = ended
        self.status = status
    }

    /// Something changed (a loop event, a request): the producer looks now. Any thread.
    func poke() {
        let waiter = wake.withLock { w -> CheckedContinuation<Void, Never>? in
            guard let waiter = w.waiter else {
                w.pending = true
                return nil
            }
            w.waiter = nil
            return waiter
        }
        waiter?.resume()
    }

    /// Waits for a poke, or `timeout` at most.
    private func sleep(upTo timeout: Duration) async {
        let timer = Task { [self] in
            try? await Task.sleep(for: timeout)
            if !Task.isCancelled { poke() }
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = wake.withLock { w -> Bool in
                if w.pending {
                    w.pending = false
                    return true
                }
                w.waiter = continuation
                return false
            }
            if now { continuation.resume() }
        }
        timer.cancel()
    }

    /// The latest status to greet a new client with, then every frame after `version`;
    /// nil once the session has ended.
    func next(after version: Int?) async -> Frame? {
        startIfNeeded()
        if version == nil, let first = state.withLock({ $0.latestStatus }) { return first }
        let after = version ?? -1
        return await withCheckedContinuation { continuation in
            let immediate: Frame?? = state.withLock { s in
                if s.ended { return .some(nil) }
                s.waiters.append((after, continuation))
                return .none
            }
            if let immediate { continuation.resume(returning: immediate) }
        }
    }

    private func startIfNeeded() {
        let start = state.withLock { s -> Bool in
            defer { s.started = true }
            return !s.started
        }
        guard start else { return }
        Task.detached { [self] in await produce() }
    }

    private func produce() async {
        var last: ServeStatus?
        var lastSent = -Double.infinity
        var lastStatusSent = -Double.infinity
        while !ended() {
            let hasWaiters = state.withLock { !$0.waiters.isEmpty }
            if hasWaiters || last == nil {
                let current = status()
                let t = now()
                let changed = last.map { !$0.sameApartFromTheClock(current) } ?? true
                let clockMoved = last.map { $0 != current } ?? true
                if (changed && t - lastStatusSent >= 0.2) || (clockMoved && t - lastStatusSent >= 1) {
                    var sent = current
                    sent.clock = ServeStatus.clock(t)
                    let data = (try? JSONEncoder.serve.encode(sent)) ?? Data("{}".utf8)
                    publish(ByteBuffer(string: "data: " + String(decoding: data, as: UTF8.self) + "\n\n"), isStatus: true)
                    last = current
                    lastSent = t
                    lastStatusSent = t
                } else if t - lastSent >= 0.5 {
                    // The server's clock, for a page's estimate of it (a jog's `began`).
                    publish(ByteBuffer(string: "event: heartbeat\ndata: {\"clock\":\(Int(ServeStatus.clock(t)))}\n\n"), isStatus: false)
                    lastSent = t
                }
            }
            // At rest nothing changes between events but the heartbeat's due time.
            let resting = last?.state.isResting ?? false
            await sleep(upTo: resting ? restingPeriod : period)
        }
        let waiters = state.withLock { s in
            s.ended = true
            defer { s.waiters = [] }
            return s.waiters
        }
        for waiter in waiters { waiter.continuation.resume(returning: nil) }
    }

    private func publish(_ bytes: ByteBuffer, isStatus: Bool) {
        let (frame, ready) = state.withLock { s -> (Frame, [CheckedContinuation<Frame?, Never>]) in
            s.version += 1
            let frame = Frame(version: s.version, bytes: bytes, isStatus: isStatus)
            if isStatus { s.latestStatus = frame }
            let ready = s.waiters.filter { $0.after < frame.version }.map(\.continuation)
            s.waiters.removeAll { $0.after < frame.version }
            return (frame, ready)
        }
        for continuation in ready { continuation.resume(returning: frame) }
    }
}

/// Wakes the event stream after every request that may change something (not GET/HEAD/
/// OPTIONS): a play, a step, a jog, taking control. Refused ones too; a look is cheap.
struct FeedPokeMiddleware: RouterMiddleware {
    typealias Context = ServeContext
    let feed: StatusFeed

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard ![.get, .head, .options].contains(request.method) else { return try await next(request, context) }
        defer { feed.poke() }
        return try await next(request, context)
    }
}
