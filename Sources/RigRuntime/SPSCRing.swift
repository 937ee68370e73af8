import Synchronization

/// A fixed-capacity single-producer single-consumer queue: the loop thread pushes
/// without locks or allocation, another thread drains.
public final class SPSCRing<Element>: @unchecked Sendable {
    private let storage: UnsafeMutablePointer<Element?>
    private let capacity: Int
    private let head = Atomic<Int>(0)  // next slot to read
    private let tail = Atomic<Int>(0)  // next slot to write
    private let dropped = Atomic<Int>(0)

    public init(capacity: Int) {
        self.capacity = max(2, capacity)
        storage = UnsafeMutablePointer<Element?>.allocate(capacity: self.capacity)
        storage.initialize(repeating: nil, count: self.capacity)
    }

    deinit {
        storage.deinitialize(count: capacity)
        storage.deallocate()
    }

    /// Producer side. Returns false (and counts a drop) when full.
    @inline(__always)
    @discardableResult
    public func push(_ element: Element) -> Bool {
        let t = tail.load(ordering: .relaxed)
        let next = (t + 1) % capacity
        if next == head.load(ordering: .acquiring) {
            dropped.add(1, ordering: .relaxed)
            return false
        }
        storage[t] = element
        tail.store(next, ordering: .releasing)
        return true
    }

    /// Consumer side.
    public func pop() -> Element? {
        let h = head.load(ordering: .relaxed)
        if h == tail.load(ordering: .acquiring) { return nil }
        let element = storage[h]
        storage[h] = nil
        head.store((h + 1) % capacity, ordering: .releasing)
        return element
    }

    /// Elements pushed when the ring was full (lost).
    public var droppedCount: Int { dropped.load(ordering: .relaxed) }
}
