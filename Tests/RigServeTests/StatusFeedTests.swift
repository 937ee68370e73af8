import Foundation
import Synchronization
import Testing

@testable import RigServe

/// The event stream's producer: one status and one encoding per message, for every client.
@Suite struct StatusFeedTests {
    final class Counter: Sendable {
        let calls = Atomic<Int>(0)
        let clock = Mutex(0.0)
    }

    static func status(_ n: Int, state: ServeState = .moving) -> ServeStatus {
        ServeStatus(
            state: state, program: "p.json", step: nil, steps: nil, elapsedSeconds: nil, etaSeconds: nil, pose: ["pan": Double(n)],
            output: .init(type: "sim", state: "running"), error: nil, controller: nil, lastStop: nil, lastShot: nil)
    }

    @Test func fiftyClientsShareEachStatus() async throws {
        let counter = Counter()
        // A clock that moves 0.25 s a look: every look is a changed status worth sending.
        let feed = StatusFeed(
            period: .milliseconds(5),
            now: {
                counter.clock.withLock { t in
                    t += 0.25
                    return t
                }
            },
            ended: { false },
            status: { Self.status(counter.calls.add(1, ordering: .relaxed).newValue) })
        let seen = try await withThrowingTaskGroup(of: [Int].self) { group in
            for _ in 0..<50 {
                group.addTask {
                    var versions: [Int] = []
                    var version: Int?
                    while versions.count < 6, let frame = await feed.next(after: version) {
                        if frame.isStatus { versions.append(frame.version) }
                        version = frame.version
                    }
                    return versions
                }
            }
            var all: [[Int]] = []
            for try await versions in group { all.append(versions) }
            return all
        }
        #expect(seen.count == 50 && seen.allSatisfy { $0.count == 6 })
        // Each client got frames in order; the statuses computed are about as many as one
        // client read, not fifty times as many.
        #expect(seen.allSatisfy { $0 == $0.sorted() })
        let calls = counter.calls.load(ordering: .relaxed)
        let newest = seen.compactMap(\.last).max() ?? 0
        #expect(calls <= newest + 2, "\(calls) statuses computed for \(newest) messages")
    }

    @Test func clientsEndWhenTheSessionEnds() async {
        let ended = Atomic<Bool>(false)
        let feed = StatusFeed(period: .milliseconds(5), now: { 0 }, ended: { ended.load(ordering: .relaxed) }, status: { Self.status(0) })
        let first = await feed.next(after: nil)
        #expect(first?.isStatus == true)
        ended.store(true, ordering: .relaxed)
        var version = first?.version
        var frames = 0
        while let frame = await feed.next(after: version) {
            version = frame.version
            frames += 1
            if frames > 1000 { break }
        }
        #expect(frames < 1000, "the stream ended")
    }

    /// At rest the producer does not poll: with a heartbeat an hour away, the only way a
    /// changed status reaches a client is the poke that says something happened.
    @Test(.timeLimit(.minutes(1))) func atRestAChangeIsSentWhenPoked() async {
        let counter = Counter()
        let pose = Atomic<Int>(0)
        let feed = StatusFeed(
            period: .seconds(3600), restingPeriod: .seconds(3600),
            now: {
                counter.clock.withLock { t in
                    t += 1
                    return t
                }
            }, ended: { false },
            status: {
                counter.calls.add(1, ordering: .relaxed)
                return Self.status(pose.load(ordering: .relaxed), state: .idle)
            })
        let first = await feed.next(after: nil)
        #expect(first?.isStatus == true)
        let looks = counter.calls.load(ordering: .relaxed)
        pose.store(7, ordering: .relaxed)
        feed.poke()
        var version = first?.version
        var changed: Feed?
        while changed == nil, let frame = await feed.next(after: version) {
            version = frame.version
            if frame.isStatus, String(buffer: frame.bytes).contains("\"pan\":7") { changed = frame }
        }
        #expect(changed != nil)
        // One look for the poke (and perhaps one for the first client's arrival), not a poll.
        #expect(counter.calls.load(ordering: .relaxed) <= looks + 2)
    }

    typealias Feed = StatusFeed.Frame
}
