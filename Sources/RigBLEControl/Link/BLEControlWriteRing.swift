import Synchronization

/// A fixed-capacity single-producer single-consumer queue of BLE writes: the loop thread
/// copies each packed write into a preallocated slot (no lock, no allocation), the sender
/// thread drains. Each write carries the tick that packed it and the link generation it
/// was packed for, so the sender can drop what is stale.
final class BLEControlWriteRing: @unchecked Sendable {
    struct Stamp {
        var length: Int
        var tick: Int
        var generation: Int
    }

    let slotBytes: Int
    let capacity: Int
    private let storage: UnsafeMutablePointer<UInt8>
    private let stamps: UnsafeMutablePointer<Stamp>
    private let head = Atomic<Int>(0)  // next slot to read (consumer)
    private let tail = Atomic<Int>(0)  // next slot to write (producer)

    init(slots: Int, slotBytes: Int) {
        capacity = max(2, slots)
        self.slotBytes = slotBytes
        storage = .allocate(capacity: capacity * slotBytes)
        storage.initialize(repeating: 0, count: capacity * slotBytes)
        stamps = .allocate(capacity: capacity)
        stamps.initialize(repeating: Stamp(length: 0, tick: 0, generation: 0), count: capacity)
    }

    deinit {
        storage.deallocate()
        stamps.deallocate()
    }

    /// Producer: how many writes can be pushed now.
    var freeSlots: Int {
        let used = (tail.load(ordering: .relaxed) - head.load(ordering: .acquiring) + capacity) % capacity
        return capacity - 1 - used
    }

    /// Producer: copies `bytes[start..<start+length]` into the next slot. False when full.
    @discardableResult
    func push(_ bytes: [UInt8], start: Int, length: Int, tick: Int, generation: Int) -> Bool {
        let t = tail.load(ordering: .relaxed)
        let next = (t + 1) % capacity
        guard next != head.load(ordering: .acquiring), length <= slotBytes else { return false }
        let slot = storage + t * slotBytes
        for offset in 0..<length { slot[offset] = bytes[start + offset] }
        stamps[t] = Stamp(length: length, tick: tick, generation: generation)
        tail.store(next, ordering: .releasing)
        return true
    }

    /// Consumer: copies the oldest write into `buffer` (≥ `slotBytes`) and returns its stamp.
    func pop(into buffer: UnsafeMutableRawBufferPointer) -> Stamp? {
        let h = head.load(ordering: .relaxed)
        guard h != tail.load(ordering: .acquiring) else { return nil }
        let stamp = stamps[h]
        if let base = buffer.baseAddress {
            base.copyMemory(from: storage + h * slotBytes, byteCount: min(stamp.length, buffer.count))
        }
        head.store((h + 1) % capacity, ordering: .releasing)
        return stamp
    }
}
