import RigRuntime

/// The queue of BLE writes: an `SPSCRing` of stamps with the bytes of each write in a
/// preallocated slot beside it. The loop thread copies each packed write into its slot (no
/// lock, no allocation), the sender thread drains. Each write carries the tick that packed
/// it and the link generation it was packed for, so the sender can drop what is stale.
final class BLEControlWriteRing: @unchecked Sendable {
    struct Stamp {
        var length: Int
        var tick: Int
        var generation: Int
    }

    let slotBytes: Int
    let capacity: Int
    private let ring: SPSCRing<Stamp>
    private let storage: UnsafeMutablePointer<UInt8>

    init(slots: Int, slotBytes: Int) {
        ring = SPSCRing(capacity: slots)
        capacity = ring.capacity
        self.slotBytes = slotBytes
        storage = .allocate(capacity: capacity * slotBytes)
        storage.initialize(repeating: 0, count: capacity * slotBytes)
    }

    deinit {
        storage.deallocate()
    }

    /// Producer: how many writes can be pushed now.
    var freeSlots: Int { ring.freeSlots }

    /// Producer: copies `bytes[start..<start+length]` into the next slot. False when full.
    @discardableResult
    func push(_ bytes: [UInt8], start: Int, length: Int, tick: Int, generation: Int) -> Bool {
        guard length <= slotBytes else { return false }
        return ring.push(Stamp(length: length, tick: tick, generation: generation)) { index in
            let slot = storage + index * slotBytes
            for offset in 0..<length { slot[offset] = bytes[start + offset] }
        }
    }

    /// Consumer: copies the oldest write into `buffer` (≥ `slotBytes`) and returns its stamp.
    func pop(into buffer: UnsafeMutableRawBufferPointer) -> Stamp? {
        ring.pop { index, stamp in
            if let base = buffer.baseAddress {
                base.copyMemory(from: storage + index * slotBytes, byteCount: min(stamp.length, buffer.count))
            }
        }
    }
}
