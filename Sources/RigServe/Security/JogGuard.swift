import Synchronization

/// What makes a jog request one a finger on the screen means now. The page sends each
/// press with an id (`press`, new for every touch), a sequence number (`seq`, rising within
/// the press) and the milliseconds since the press began (`t`). A request that would move
/// the rig is dropped when:
/// - its press was stopped (STOP latches: the finger must lift and press again);
/// - it comes out of order (a `seq` not above the last one of its press);
/// - it is stale: it arrives later than `maxAgeSeconds` after it was sent, judged from the
///   press's own timing (the least transit seen so far in that press is the reference), so
///   jogs queued through a link stall and delivered together move nothing.
/// A request that stops (all velocities zero) is never dropped for age or order. Requests
/// without a press id (scripts) pass, as before; the deadman still stops them.
public final class JogGuard: Sendable {
    public let maxAgeSeconds: Double

    private struct Press {
        var lastSeq: Int
        /// Server time minus the press's `t`, the least seen (clock offset + least transit).
        var offset: Double
        var lastSeenSeconds: Double
    }

    private struct State {
        var presses: [String: Press] = [:]
        /// Stopped presses, oldest first (bounded).
        var latched: [String] = []
    }

    public enum Verdict: Sendable, Equatable {
        case accept
        /// Refused, with the reason for the reply.
        case drop(String)
    }

    private let state = Mutex(State())
    private static let maxPresses = 64

    public init(maxAgeSeconds: Double) {
        self.maxAgeSeconds = maxAgeSeconds
    }

    /// Judges one jog request.
    public func judge(press: String?, seq: Int?, sentMilliseconds: Double?, stopping: Bool, nowSeconds: Double) -> Verdict {
        guard let press else { return .accept }
        return state.withLock { s in
            if s.latched.contains(press) { return .drop("this press was stopped: lift your finger and press again") }
            let t = (sentMilliseconds ?? 0) / 1000
            guard var p = s.presses[press] else {
                if s.presses.count >= Self.maxPresses, let oldest = s.presses.min(by: { $0.value.lastSeenSeconds < $1.value.lastSeenSeconds }) {
                    s.presses[oldest.key] = nil
                }
                s.presses[press] = Press(lastSeq: seq ?? Int.min, offset: nowSeconds - t, lastSeenSeconds: nowSeconds)
                return .accept
            }
            p.lastSeenSeconds = nowSeconds
            p.offset = min(p.offset, nowSeconds - t)
            let age = nowSeconds - t - p.offset
            var verdict = Verdict.accept
            if let seq {
                if seq <= p.lastSeq, !stopping { verdict = .drop("out of order (seq \(seq) after \(p.lastSeq)): dropped") }
                p.lastSeq = max(p.lastSeq, seq)
            }
            if verdict == .accept, sentMilliseconds != nil, age > maxAgeSeconds, !stopping {
                verdict = .drop("stale: sent \(Int((age * 1000).rounded())) ms before it arrived (at most \(Int(maxAgeSeconds * 1000)) ms): dropped")
            }
            s.presses[press] = p
            return verdict
        }
    }

    /// STOP: the presses seen lately are latched; none of them moves the rig again.
    public func latchAll() {
        state.withLock { s in
            for key in s.presses.keys where !s.latched.contains(key) { s.latched.append(key) }
            s.presses.removeAll()
            if s.latched.count > Self.maxPresses { s.latched.removeFirst(s.latched.count - Self.maxPresses) }
        }
    }
}
