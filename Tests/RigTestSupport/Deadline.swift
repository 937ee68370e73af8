import Glibc
import RigFormat

/// Bounds a wait that should end on an event: fails with ``DeadlineExceeded`` if `operation`
/// has not finished within `limit`. Not a synchronisation sleep: the operation finishes as soon
/// as its event arrives.
public struct DeadlineExceeded: Error {
    public init() {}
}

public func withDeadline<T: Sendable>(
    _ limit: Duration = .seconds(10), _ operation: @escaping @Sendable () async throws -> T
) async throws -> T {
    try await withThrowingTaskGroup(of: T.self) { group in
        group.addTask { try await operation() }
        group.addTask {
            try await Task.sleep(for: limit)
            throw DeadlineExceeded()
        }
        defer { group.cancelAll() }
        guard let first = try await group.next() else { throw DeadlineExceeded() }
        return first
    }
}

/// The next element of a signal stream, within a deadline.
public func next<S: AsyncSequence & Sendable>(_ stream: S, within limit: Duration = .seconds(10)) async throws -> S.Element
where S.Element: Sendable {
    try await withDeadline(limit) {
        var iterator = stream.makeAsyncIterator()
        guard let element = try await iterator.next() else { throw DeadlineExceeded() }
        return element
    }
}

/// A bounded polling loop: evaluates `attempt` until it returns a value, pausing `interval`
/// between attempts, and fails with ``DeadlineExceeded`` after `limit`. For conditions no
/// event announces (another process finishing its start-up).
public func poll<T: Sendable>(
    every interval: Duration = .milliseconds(50), for limit: Duration = .seconds(30),
    _ attempt: @escaping @Sendable () async throws -> T?
) async throws -> T {
    try await withDeadline(limit) {
        while true {
            if let value = try await attempt() { return value }
            try await Task.sleep(for: interval)
        }
    }
}

/// ``poll(every:for:_:)`` for a thread that must not return before the condition holds (an
/// output's shutdown held until a reply arrived): blocks this thread, returns `nil` after
/// `limit`.
public func pollBlocking<T>(
    every interval: Duration = .milliseconds(20), for limit: Duration = .seconds(30), _ attempt: () -> T?
) -> T? {
    let clock = ContinuousClock()
    let end = clock.now + limit
    while clock.now < end {
        if let value = attempt() { return value }
        let (seconds, attoseconds) = interval.components
        var pause = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
        nanosleep(&pause, nil)
    }
    return attempt()
}
