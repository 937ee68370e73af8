/// The fewest bus bytes any sequence of writes could use to make a set of LED register
/// changes, found by exhaustive search: the yardstick `rig bench pca9685` holds
/// ``PCA9685BurstPlanner`` (a dynamic program) against.
///
/// Under the same two rules as the planner (a channel's changed registers go out in one
/// transaction, or the chip would latch half a change at a STOP; at most 32 data bytes a
/// transaction), a useful write covers a run of whole "groups" (one group per channel with
/// changes, from its first changed register to its last), so every write sequence worth
/// considering is a choice, between each pair of neighbouring groups, of merging them into
/// one write or not: 2^(groups − 1) choices, all of them tried. Allocates; not for the loop
/// thread.
public enum PCA9685WriteOptimum {
    /// The optimum's bytes and, among the cheapest plans, the fewest transactions.
    /// - Parameters:
    ///   - changed: 64 flags, LED0_ON_L first.
    ///   - overheadBytes: what a transaction costs besides its data (address + register).
    public static func fewestBytes(changed: [Bool], overheadBytes: Int = 2) -> (bytes: Int, transactions: Int) {
        let perChannel = PCA9685Register.bytesPerChannel
        var groups: [(first: Int, last: Int)] = []
        for channel in 0..<PCA9685Register.channelCount {
            let registers = (channel * perChannel)..<((channel + 1) * perChannel)
            guard let first = registers.first(where: { changed[$0] }),
                let last = registers.last(where: { changed[$0] })
            else { continue }
            groups.append((first, last))
        }
        guard !groups.isEmpty else { return (0, 0) }
        var best = (bytes: Int.max, transactions: Int.max)
        let cuts = groups.count - 1
        for mask in 0..<(1 << cuts) {
            // Bit i set: a new write starts at group i + 1.
            var bytes = 0
            var transactions = 0
            var start = groups[0].first
            var valid = true
            for g in 0..<groups.count {
                let endsHere = g == cuts || mask & (1 << g) != 0
                guard endsHere else { continue }
                let length = groups[g].last - start + 1
                if length > PCA9685BurstPlanner.maxBytesPerBurst {
                    valid = false
                    break
                }
                bytes += overheadBytes + length
                transactions += 1
                if g < cuts { start = groups[g + 1].first }
            }
            if valid, bytes < best.bytes || (bytes == best.bytes && transactions < best.transactions) {
                best = (bytes, transactions)
            }
        }
        return best
    }
}
