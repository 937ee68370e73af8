/// Chooses the auto-increment bursts that write a set of changed channels in the fewest
/// bus bytes.
///
/// A burst starting at channel `a` and ending at channel `b` costs
/// `transactionOverheadBytes + 4 × (b − a + 1)`: every channel inside it is rewritten,
/// changed or not. So an unchanged gap of `g` channels is bridged only when `4g` is less
/// than (or equal to, preferring fewer transactions) the overhead of a second transaction.
/// With the SMBus default overhead of 2 bytes (address + register) a gap is never
/// bridged; a bus with a costlier transaction (its own overhead) bridges short gaps. A
/// burst holds at most ``maxChannelsPerBurst`` channels: libi2c's SMBus block write
/// carries at most 32 data bytes.
///
/// Planning is a small dynamic program over the (at most 16) changed channels, in
/// preallocated arrays: it does not allocate, so it can run on the loop thread.
struct PCA9685BurstPlanner {
    /// 32 data bytes / 4 bytes per channel.
    static let maxChannelsPerBurst = 8

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
        let n = PCA9685Register.channelCount
        positions = Array(repeating: 0, count: n)
        bestCost = Array(repeating: 0, count: n + 1)
        bestTransactions = Array(repeating: 0, count: n + 1)
        bestStart = Array(repeating: 0, count: n + 1)
        burstFirst = Array(repeating: 0, count: n)
        burstCount = Array(repeating: 0, count: n)
    }

    /// The `index`th burst: first channel and number of channels.
    @inline(__always)
    func burst(_ index: Int) -> (firstChannel: Int, channelCount: Int) {
        (burstFirst[index], burstCount[index])
    }

    /// Plans bursts covering every channel whose `changed` flag is set (16 flags).
    /// Returns the number of bursts; read them with `burst(_:)`, in channel order.
    @discardableResult
    mutating func plan(changed: [Bool]) -> Int {
        var k = 0
        for channel in 0..<PCA9685Register.channelCount where changed[channel] {
            positions[k] = channel
            k += 1
        }
        bestCost[0] = 0
        bestTransactions[0] = 0
        // bestCost[j]: the cheapest way to write the first j changed channels, the last
        // burst being positions[bestStart[j]]...positions[j - 1].
        for j in stride(from: 1, through: k, by: 1) {
            let last = positions[j - 1]
            var cost = Int.max, transactions = Int.max, start = j - 1
            var i = j - 1
            while i >= 0, last - positions[i] < Self.maxChannelsPerBurst {
                let candidate = bestCost[i] + transactionOverheadBytes + PCA9685Register.bytesPerChannel * (last - positions[i] + 1)
                let candidateTransactions = bestTransactions[i] + 1
                if candidate < cost || (candidate == cost && candidateTransactions < transactions) {
                    cost = candidate
                    transactions = candidateTransactions
                    start = i
                }
                i -= 1
            }
            bestCost[j] = cost
            bestTransactions[j] = transactions
            bestStart[j] = start
        }
        count = k == 0 ? 0 : bestTransactions[k]
        var j = k, slot = count
        while j > 0 {
            slot -= 1
            let start = bestStart[j]
            burstFirst[slot] = positions[start]
            burstCount[slot] = positions[j - 1] - positions[start] + 1
            j = start
        }
        return count
    }
}
