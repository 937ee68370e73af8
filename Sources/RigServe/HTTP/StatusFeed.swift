import Foundation
import NIOCore
import Synchronization

/// `/api/events` for every client at once: one producer computes the status, decides what
/// to send (a change at most every 200 ms, the clock alone once a second, a heartbeat after
/// 0.5 s of nothing), encodes it once, and hands the same bytes to every waiting client. A
/// client only waits for the next frame and writes it: 200 phones cost one status a tick,
/// not 200.
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

    private let state = Mutex(State())
    private let status: @Sendable () -> ServeStatus
    private let ended: @Sendable () -> Bool
    private let now: @Sendable () -> Double
    /// How often the producer looks at the loop's snapshot.
    private let period: Duration

    init(
        period: Duration = .milliseconds(50), now: @escaping @Sendable () -> Double, ended: @escaping @Sendable () -> Bool,
        status: @escaping @Sendable () -> ServeStatus
    ) {
        self.period = period
        self.now = now
        self.ended = ended
        self.status = status
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
                    let data = (try? JSONEncoder.serve.encode(current)) ?? Data("{}".utf8)
                    publish(ByteBuffer(string: "data: " + String(decoding: data, as: UTF8.self) + "\n\n"), isStatus: true)
                    last = current
                    lastSent = t
                    lastStatusSent = t
                } else if t - lastSent >= 0.5 {
                    publish(ByteBuffer(string: "event: heartbeat\ndata: {}\n\n"), isStatus: false)
                    lastSent = t
                }
            }
            try? await Task.sleep(for: period)
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
