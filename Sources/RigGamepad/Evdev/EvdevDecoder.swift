/// Assembles evdev records into packets: changes collect in a pending state and become
/// visible together at SYN_REPORT, so a stick's X and Y never tear. After SYN_DROPPED
/// (the kernel's buffer overflowed) everything up to and including the next SYN_REPORT
/// is discarded and the caller must resync the state from the device (EVIOCGABS,
/// EVIOCGKEY), as libevdev does.
public struct EvdevDecoder: Sendable {
    /// What feeding one record led to.
    public enum Outcome: Sendable, Equatable {
        case none
        /// A packet ended: `state` changed.
        case packet
        /// Events were lost: read the device's state and call `resync`.
        case resyncNeeded
    }

    /// The state as of the last complete packet.
    public private(set) var state = EvdevState()
    private var pending = EvdevState()
    public private(set) var dropping = false
    /// Packets completed, and SYN_DROPPED seen (for logs and tests).
    public private(set) var packetCount = 0
    public private(set) var dropCount = 0

    public init() {}

    @inline(__always)
    public mutating func feed(_ event: InputEvent) -> Outcome {
        if event.type == EvdevCode.synchronization {
            if event.code == EvdevCode.synDropped {
                dropping = true
                dropCount += 1
                pending.copy(from: state)
                return .none
            }
            guard event.code == EvdevCode.synReport else { return .none }
            if dropping {
                dropping = false
                return .resyncNeeded
            }
            state.copy(from: pending)
            packetCount += 1
            return .packet
        }
        guard !dropping else { return .none }
        if event.type == EvdevCode.absolute {
            pending.setAbs(event.code, event.value)
        } else if event.type == EvdevCode.key {
            // 0 released, 1 pressed, 2 autorepeat (still down).
            pending.setKey(event.code, down: event.value != 0)
        }
        return .none
    }

    /// Sets the state read from the device after `resyncNeeded` (or at open).
    public mutating func resync(_ body: (inout EvdevState) -> Void) {
        body(&pending)
        state.copy(from: pending)
        dropping = false
    }
}
