import Testing
@testable import RigPCA9685

@Suite struct PCA9685BurstPlannerTests {
    func plan(_ channels: [Int], overhead: Int = 2) -> [[Int]] {
        var planner = PCA9685BurstPlanner(transactionOverheadBytes: overhead)
        var changed = [Bool](repeating: false, count: 16)
        for channel in channels { changed[channel] = true }
        let count = planner.plan(changed: changed)
        return (0..<count).map { let b = planner.burst($0); return [b.firstChannel, b.channelCount] }
    }

    @Test func nothingChangedMeansNoTransaction() {
        #expect(plan([]) == [])
    }

    @Test func adjacentChannelsGoOutInOneBurst() {
        #expect(plan([3]) == [[3, 1]])
        #expect(plan([0, 1, 2]) == [[0, 3]])
    }

    @Test func aGapCostsMoreThanANewTransactionWithSMBusOverhead() {
        // Bridging one unchanged channel: 4 bytes; a second transaction: 2 bytes.
        #expect(plan([0, 2]) == [[0, 1], [2, 1]])
        #expect(plan([0, 1, 5, 6, 7]) == [[0, 2], [5, 3]])
    }

    @Test func costlierTransactionsBridgeShortGaps() {
        #expect(plan([0, 2], overhead: 4) == [[0, 3]])  // a tie: fewer transactions win
        #expect(plan([0, 3], overhead: 6) == [[0, 1], [3, 1]])
        #expect(plan([0, 3], overhead: 8) == [[0, 4]])
    }

    @Test func burstsHoldAtMostEightChannels() {
        #expect(plan(Array(0..<16)) == [[0, 8], [8, 8]])
        #expect(plan(Array(0..<10)) == [[0, 8], [8, 2]])
        #expect(plan(Array(3..<12), overhead: 100) == [[3, 8], [11, 1]])
    }

    @Test func planIsOptimalForEverySubsetWithSMBusOverhead() {
        // With a 2-byte overhead the optimum is: every run of adjacent changed channels,
        // cut into pieces of at most 8.
        for mask in 0..<(1 << 16) {
            let channels = (0..<16).filter { mask & (1 << $0) != 0 }
            var expectedBursts = 0, run = 0
            for channel in 0...16 {
                if channel < 16, mask & (1 << channel) != 0 { run += 1 } else {
                    expectedBursts += (run + 7) / 8
                    run = 0
                }
            }
            let bursts = plan(channels)
            let covered = bursts.flatMap { Array($0[0]..<($0[0] + $0[1])) }
            if bursts.count != expectedBursts || covered != channels {
                Issue.record("mask \(mask): \(bursts)")
                return
            }
        }
    }
}
