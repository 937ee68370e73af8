import Synchronization

/// What makes a jog request one a finger on the screen means now. The page sends each
/// press with an id (`press`, new for every touch), a sequence number (`seq`, rising within
/// the press), when the press began on the server's clock (`began`, ms, as the page
/// estimates it from the statuses' `clock`) and the milliseconds since it began (`t`), so
/// each request says when it was sent (`began + t`) on the server's clock. A request that
/// would move the rig is dropped when:
/// - its press was stopped, or began before the last STOP: STOP ends every jog for good;
///   the finger must lift and press again;
/// - it has no press and a STOP was ever sent: after a STOP a client (a script, a gamepad
///   bridge) moves the rig again only with a new press;
/// - its press's first request does not say when the press began;
/// - it comes out of order (a `seq` not above the last one of its press);
/// - it is stale: it arrives more than `maxAgeSeconds` after it was sent, so jogs queued
///   through a link stall and delivered together move nothing, the first of a press too.
/// A request that stops (all velocities zero) is never dropped for age, order or a missing
/// `began`. Requests without a press id pass until the first STOP (the deadman stops them).
public final class JogGuard: Sendable {
    public let maxAgeSeconds: Double
    /// A `began` this far ahead of the server's clock is a client's wrong estimate, not a
    /// press: refused (the page's estimate is never ahead; its requests take time).
    public static let futureToleranceSeconds = 0.1

    private struct Press {
        var lastSeq: Int
        /// When the press began on the server's clock (s): its `began`, or for a press whose
        /// first request stopped without one, the server time minus `t` least seen.
        var originSeconds: Double
        var knowsBegan: Bool
        var lastSeenSeconds: Double
    }

    private struct State {
        var presses: [String: Press] = [:]
        /// Stopped presses, oldest first (bounded).
        var latched: [String] = []
        /// When the last STOP came (server clock, s).
        var lastStopSeconds: Double?
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
    /// - Parameters:
    ///   - sentMilliseconds: `t`, ms since the press began.
    ///   - beganMilliseconds: `began`, when the press began on the server's clock (ms).
    public func judge(
        press: String?, seq: Int?, sentMilliseconds: Double?, beganMilliseconds: Double? = nil, stopping: Bool, nowSeconds: Double
    ) -> Verdict {
        state.withLock { s in
            guard let press else {
                if !stopping, s.lastStopSeconds != nil {
                    return .drop("without a press after a STOP: start a new press (a new \"press\" id, \"seq\" from 1, \"began\" from the status's clock)")
                }
                return .accept
            }
            if s.latched.contains(press) { return .drop("this press was stopped: lift your finger and press again") }
            let t = (sentMilliseconds ?? 0) / 1000
            guard var p = s.presses[press] else {
                guard let began = beganMilliseconds.map({ $0 / 1000 }) else {
                    if !stopping { return .drop("a press's first request must say when it began (\"began\", ms on the status's clock)") }
                    Self.remember(press, Press(lastSeq: seq ?? Int.min, originSeconds: nowSeconds - t, knowsBegan: false, lastSeenSeconds: nowSeconds), in: &s)
                    return .accept
                }
                if began > nowSeconds + Self.futureToleranceSeconds {
                    return .drop(
                        "began \(Self.milliseconds(began - nowSeconds)) ms ahead of the server's clock: estimate it from the status's clock")
                }
                if let stop = s.lastStopSeconds, began < stop, !stopping {
                    return .drop("this press began before the last STOP: lift your finger and press again")
                }
                let age = nowSeconds - began - t
                if age > maxAgeSeconds, !stopping { return .drop(Self.stale(age, maxAgeSeconds)) }
                Self.remember(press, Press(lastSeq: seq ?? Int.min, originSeconds: began, knowsBegan: true, lastSeenSeconds: nowSeconds), in: &s)
                return .accept
            }
            p.lastSeenSeconds = nowSeconds
            if !p.knowsBegan { p.originSeconds = min(p.originSeconds, nowSeconds - t) }
            let age = nowSeconds - p.originSeconds - t
            var verdict = Verdict.accept
            if let seq {
                if seq <= p.lastSeq, !stopping { verdict = .drop("out of order (seq \(seq) after \(p.lastSeq)): dropped") }
                p.lastSeq = max(p.lastSeq, seq)
            }
            if verdict == .accept, age > maxAgeSeconds, !stopping { verdict = .drop(Self.stale(age, maxAgeSeconds)) }
            s.presses[press] = p
            return verdict
        }
    }

    private static func stale(_ age: Double, _ maxAge: Double) -> String {
        "stale: sent \(milliseconds(age)) ms before it arrived (at most \(milliseconds(maxAge)) ms): dropped"
    }

    /// Seconds as whole milliseconds for a reply, whatever the client sent (a 1e32 `began`
    /// must not trap the conversion).
    static func milliseconds(_ seconds: Double) -> Int {
        let ms = (seconds * 1000).rounded()
        return ms.isFinite ? Int(min(max(ms, -1e15), 1e15)) : 0
    }

    private static func remember(_ press: String, _ p: Press, in s: inout State) {
        if s.presses.count >= maxPresses, let oldest = s.presses.min(by: { $0.value.lastSeenSeconds < $1.value.lastSeenSeconds }) {
            s.presses[oldest.key] = nil
        }
        s.presses[press] = p
    }

    /// STOP at `nowSeconds`: the presses seen lately are latched, and no press that began
    /// before now (nor a jog without a press) moves the rig again.
    public func latchAll(nowSeconds: Double) {
        state.withLock { s in
            for key in s.presses.keys where !s.latched.contains(key) { s.latched.append(key) }
            s.presses.removeAll()
            if s.latched.count > Self.maxPresses { s.latched.removeFirst(s.latched.count - Self.maxPresses) }
            s.lastStopSeconds = max(s.lastStopSeconds ?? -Double.infinity, nowSeconds)
        }
    }
}
