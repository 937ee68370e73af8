import Testing

@testable import RigPCA9685

@Suite struct PCA9685BurstPlannerTests {
    /// Plans for the given changed LED registers (0 = LED0_ON_L); returns [first, bytes] pairs.
    func plan(_ registers: [Int], overhead: Int = 2) -> [[Int]] {
        var planner = PCA9685BurstPlanner(transactionOverheadBytes: overhead)
        var changed = [Bool](repeating: false, count: 64)
        for register in registers { changed[register] = true }
        let count = planner.plan(changed: changed)
        return (0..<count).map {
            let b = planner.burst($0)
            return [b.firstRegister, b.byteCount]
        }
    }

    @Test func nothingChangedMeansNoTransaction() {
        #expect(plan([]) == [])
    }

    @Test func onlyTheChangedBytesOfAChannelGoOut() {
        // A servo's small move: LED3_OFF_L alone (register 14); a larger one: OFF_L and OFF_H.
        #expect(plan([14]) == [[14, 1]])
        #expect(plan([14, 15]) == [[14, 2]])
        // ON_L and OFF_L of one channel: ON_H is rewritten in between (one transaction, no glitch).
        #expect(plan([12, 14]) == [[12, 3]])
        #expect(plan(Array(0..<8)) == [[0, 8]])
    }

    @Test func aGapCostsMoreThanANewTransactionWithSMBusOverhead() {
        // OFF_L of channels 0 and 1: bridging costs 3 bytes, a second transaction 2.
        #expect(plan([2, 6]) == [[2, 1], [6, 1]])
        // OFF_L and OFF_H of channels 0 and 1: bridging ON_L, ON_H (2 bytes) ties with a
        // second transaction; fewer transactions win.
        #expect(plan([2, 3, 6, 7]) == [[2, 6]])
        #expect(plan([3, 4]) == [[3, 2]])
    }

    @Test func costlierTransactionsBridgeLongerGaps() {
        #expect(plan([2, 6], overhead: 3) == [[2, 5]])  // a tie: fewer transactions win
        #expect(plan([2, 10], overhead: 6) == [[2, 1], [10, 1]])
        #expect(plan([2, 10], overhead: 7) == [[2, 9]])  // a tie again
    }

    @Test func burstsHoldAtMostThirtyTwoBytesAndNeverSplitAChannel() {
        #expect(plan(Array(0..<64)) == [[0, 32], [32, 32]])
        #expect(plan(Array(1...32)) == [[1, 32]])
        // Registers 2…34 span 33 bytes: the cut must fall between two channels.
        let bursts = plan(Array(2...34))
        #expect(bursts.count == 2)
        #expect(bursts.allSatisfy { $0[0] % 4 == 0 || $0[0] == 2 })
        #expect(bursts.reduce(0) { $0 + 2 + $1[1] } == 37)
    }

    @Test func planMatchesTheExhaustiveOptimumOnRandomFrames() {
        var g = SystemRandomNumberGenerator()
        for trial in 0..<600 {
            // From sparse (a few servos) to dense (every register), and every overhead that matters.
            let density = Double(trial % 10 + 1) / 10
            var changed = [Bool](repeating: false, count: 64)
            for r in 0..<64 where Double.random(in: 0..<1, using: &g) < density * (r % 4 >= 2 ? 1 : 0.3) { changed[r] = true }
            let overhead = [1, 2, 3, 5, 9][trial % 5]
            var planner = PCA9685BurstPlanner(transactionOverheadBytes: overhead)
            let count = planner.plan(changed: changed)
            let optimum = PCA9685WriteOptimum.fewestBytes(changed: changed, overheadBytes: overhead)
            #expect(planner.plannedBytes == optimum.bytes, "trial \(trial)")
            #expect(count == optimum.transactions, "trial \(trial)")
            // Covers every change, never splits a channel, never exceeds 32 bytes.
            var covered = [Int](repeating: 0, count: 64)
            for b in 0..<count {
                let (first, bytes) = planner.burst(b)
                #expect(bytes <= 32)
                for r in first..<(first + bytes) { covered[r] = b + 1 }
            }
            for r in 0..<64 where changed[r] { #expect(covered[r] > 0, "trial \(trial): register \(r) not written") }
            for c in 0..<16 {
                let owners = Set((4 * c..<4 * c + 4).filter { changed[$0] }.map { covered[$0] })
                #expect(owners.count <= 1, "trial \(trial): channel \(c) split over bursts \(owners)")
            }
        }
    }
}
