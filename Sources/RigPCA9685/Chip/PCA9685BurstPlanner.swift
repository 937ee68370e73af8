/// Chooses the auto-increment bursts that write a set of changed LED registers in the
/// fewest bus bytes.
///
/// The unit is the register, not the channel: a servo's LEDn_ON stays put while it moves,
/// and a small move changes only LEDn_OFF_L, so writing just the changed bytes saves up to
/// three of a channel's four. A burst starting at LED register `a` and ending at `b` costs
/// `transactionOverheadBytes + (b − a + 1)`: every register inside it is rewritten, changed
/// or not. Two rules bound the choice:
///
/// - A channel's changed registers all go in one burst. The chip latches its outputs at
///   the STOP that ends a transaction (MODE2.OCH = 0), so a channel split over two bursts
///   would run one PWM period on half-old, half-new values (a glitch).
/// - A burst holds at most ``maxBytesPerBurst`` bytes: libi2c's SMBus block write carries
///   at most 32 data bytes.
///
/// Within those rules the plan is optimal: a dynamic program over the (at most 64) changed
/// registers, where a burst may begin only at a channel's first changed register and end
/// only at its last. Ties go to fewer transactions. It runs in preallocated arrays and
/// does not allocate, so it can run on the loop thread. `rig bench pca9685` checks it
/// against an independent exhaustive search on every frame of the example programs.
struct PCA9685BurstPlanner {
    /// 32 data bytes: libi2c's SMBus block write.
    static let maxBytesPerBurst = 32
    /// The 64 LEDn_ON_L…LEDn_OFF_H registers, from LED0_ON_L.
    static let registerCount = PCA9685Register.channelCount * PCA9685Register.bytesPerChannel

    /// Bytes a transaction costs besides its data: the address byte and the register byte.
    let transactionOverheadBytes: Int

    private var positions: [Int]
    private var bestCost: [Int]
    private var bestTransactions: [Int]
    private var bestStart: [Int]
    private var burstFirst: [Int]
    private var burstCount: [Int]
    /// How many bursts the last `plan` produced.
    private(set) var count = 0

    init(transactionOverheadBytes: Int = 2) {
        self.transactionOverheadBytes = transactionOverheadBytes
        let n = Self.registerCount
        positions = Array(repeating: 0, count: n)
        bestCost = Array(repeating: 0, count: n + 1)
        bestTransactions = Array(repeating: 0, count: n + 1)
        bestStart = Array(repeating: 0, count: n + 1)
        burstFirst = Array(repeating: 0, count: n)
        burstCount = Array(repeating: 0, count: n)
    }

    /// The `index`th burst: its first LED register (0 = LED0_ON_L) and its byte count.
    @inline(__always)
    func burst(_ index: Int) -> (firstRegister: Int, byteCount: Int) {
        (burstFirst[index], burstCount[index])
    }

    /// Plans bursts covering every LED register whose `changed` flag is set (64 flags,
    /// channel `c`'s four at `4c…4c+3`). Returns the number of bursts; read them with
    /// `burst(_:)`, in register order.
    @discardableResult
    mutating func plan(changed: [Bool]) -> Int {
        let perChannel = PCA9685Register.bytesPerChannel
        var k = 0
        for register in 0..<Self.registerCount where changed[register] {
            positions[k] = register
            k += 1
        }
        bestCost[0] = 0
        bestTransactions[0] = 0
        // bestCost[j]: the cheapest way to write the first j changed registers, the last
        // burst being positions[bestStart[j]]...positions[j - 1]. Only defined where j ends
        // a channel's changed registers (j == k or the next one is another channel's).
        for j in stride(from: 1, through: k, by: 1) {
            bestCost[j] = Int.max
            let last = positions[j - 1]
            guard j == k || positions[j] / perChannel != last / perChannel else { continue }
            var cost = Int.max
            var transactions = Int.max
            var start = j - 1
            var i = j - 1
            while i >= 0, last - positions[i] < Self.maxBytesPerBurst {
                // A burst may start only where a channel's changed registers start, after a
                // prefix that ends one.
                if i == 0 || positions[i - 1] / perChannel != positions[i] / perChannel, bestCost[i] != Int.max {
                    let candidate = bestCost[i] + transactionOverheadBytes + (last - positions[i] + 1)
                    let candidateTransactions = bestTransactions[i] + 1
                    if candidate < cost || (candidate == cost && candidateTransactions < transactions) {
                        cost = candidate
                        transactions = candidateTransactions
                        start = i
                    }
                }
                i -= 1
            }
            bestCost[j] = cost
            bestTransactions[j] = transactions
            bestStart[j] = start
        }
        count = k == 0 ? 0 : bestTransactions[k]
        var j = k
        var slot = count
        while j > 0 {
            slot -= 1
            let start = bestStart[j]
            burstFirst[slot] = positions[start]
            burstCount[slot] = positions[j - 1] - positions[start] + 1
            j = start
        }
        return count
    }

    /// The bus bytes the last plan costs.
    var plannedBytes: Int {
        (0..<count).reduce(0) { $0 + transactionOverheadBytes + burstCount[$1] }
    }
}
