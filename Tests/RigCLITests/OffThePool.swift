import RigTestSupport
import Testing

/// Runs a test on `BlockingTests.executor` instead of the cooperative pool: for a test that
/// runs `rig` processes to their end synchronously (see there).
struct OffThePool: TestTrait, SuiteTrait, TestScoping {
    var isRecursive: Bool { true }

    func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        guard testCase != nil else { return try await function() }
        try await withTaskExecutorPreference(BlockingTests.executor) { try await function() }
    }
}

extension Trait where Self == OffThePool {
    /// The test blocks a thread for seconds (synchronous `rig` runs): off the cooperative pool.
    static var blocking: Self { Self() }
}
