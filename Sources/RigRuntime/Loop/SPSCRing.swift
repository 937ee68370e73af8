import Synchronization

/// A fixed-capacity single-producer single-consumer queue: the loop thread pushes
/// without locks or allocation, another thread drains. The one ring of the project: a
/// queue whose elements carry bulk data (BLE writes) keeps it in side storage per slot,
/// filled and read through `push(_:fillingSlot:)` and `pop(readingSlot:)`.
public final class SPSCRing<Element>: @unchecked Sendable {
    private let storage: UnsafeMutablePointer<Element?>
    /// Slots; one stays empty, so `capacity − 1` elements fit.
    public let capacity: Int
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
        push(element, fillingSlot: { _ in })
    }

    /// Producer side: `fill` writes the side storage of the slot (0..<capacity) the element
    /// goes to before the element is published. Returns false (and counts a drop) when full;
    /// `fill` is then not called.
    @inline(__always)
    @discardableResult
    public func push(_ element: Element, fillingSlot fill: (Int) -> Void) -> Bool {
        let t = tail.load(ordering: .relaxed)
        let next = (t + 1) % capacity
        if next == head.load(ordering: .acquiring) {
            dropped.add(1, ordering: .relaxed)
            return false
        }
        fill(t)
        storage[t] = element
        tail.store(next, ordering: .releasing)
        return true
    }

    /// Consumer side.
    public func pop() -> Element? {
        pop(readingSlot: { _, _ in })
    }

    /// Consumer side: `read` sees the element and its slot's side storage before the slot
    /// is handed back to the producer.
    @inline(__always)
    public func pop(readingSlot read: (Int, Element) -> Void) -> Element? {
        let h = head.load(ordering: .relaxed)
        if h == tail.load(ordering: .acquiring) { return nil }
        guard let element = storage[h] else { return nil }
        read(h, element)
        storage[h] = nil
        head.store((h + 1) % capacity, ordering: .releasing)
        return element
    }

    /// Producer side: how many elements can be pushed now.
    public var freeSlots: Int {
        let used = (tail.load(ordering: .relaxed) - head.load(ordering: .acquiring) + capacity) % capacity
        return capacity - 1 - used
    }

    /// Elements pushed when the ring was full (lost).
    public var droppedCount: Int { dropped.load(ordering: .relaxed) }
}
