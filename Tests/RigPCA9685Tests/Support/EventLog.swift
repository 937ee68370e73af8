import RigRuntime
import Synchronization

/// Everything that happened on a fake bus and the fake clock, in order.
enum Event: Sendable, Equatable {
    /// A transfer as the chip saw it.
    case transaction(Transaction)
    /// The driver slept (recorded instead of sleeping).
    case slept(Duration)
    /// SLEEP went from 1 to 0; the LED registers (16 × ON/OFF) and PRE_SCALE at that moment.
    case woke(leds: [ChipChannel], prescale: UInt8)
    /// A RESTART write restarted the PWM channels.
    case restarted
    /// A PRE_SCALE write arrived while SLEEP was clear and was ignored (datasheet).
    case prescaleWriteIgnored
    /// Power-on reset (brown-out) injected.
    case powerOnReset
}

/// One channel's registers as the model holds them (13-bit values incl. the full bit).
struct ChipChannel: Sendable, Equatable, CustomStringConvertible {
    var on: UInt16
    var off: UInt16
    var description: String { "(on \(on), off \(off))" }
}

/// One I2C transaction seen by the model.
struct Transaction: Sendable, Equatable {
    enum Kind: Sendable, Equatable { case writeByte, writeBlock, readByte, readBlock, quickWrite, receiveByte }
    var kind: Kind
    var address: Int
    var register: UInt8?
    var data: [UInt8]
    /// Bytes on the wire, address bytes included (START/STOP/ACK not counted).
    var busBytes: Int
    /// Whether it failed (injected error).
    var failedWith: Int32?
}

/// A log shared by the chip model and the test clock.
final class EventLog: Sendable {
    private let events = Mutex<[Event]>([])

    func append(_ event: Event) { events.withLock { $0.append(event) } }
    var all: [Event] { events.withLock { $0 } }
    func clear() { events.withLock { $0.removeAll() } }

    var transactions: [Transaction] {
        all.compactMap { if case .transaction(let t) = $0 { t } else { nil } }
    }
    var successfulTransactions: [Transaction] { transactions.filter { $0.failedWith == nil } }
    var busBytes: Int { successfulTransactions.reduce(0) { $0 + $1.busBytes } }
    var sleeps: [Duration] {
        all.compactMap { if case .slept(let d) = $0 { d } else { nil } }
    }
}

/// The driver's clock as a test steps it by hand; sleeps are recorded in the log, never slept.
final class RecordingClock: LoopClock {
    let log: EventLog
    private let time = Mutex<Duration>(.zero)

    init(log: EventLog) { self.log = log }

    func advance(by duration: Duration) { time.withLock { $0 += duration } }

    func now() -> UInt64 { time.withLock { $0 }.wholeNanoseconds }

    func sleep(until deadline: UInt64) { sleep(forNanoseconds: deadline &- min(deadline, now())) }

    func sleep(forNanoseconds nanoseconds: UInt64) { log.append(.slept(.nanoseconds(Int64(clamping: nanoseconds)))) }
}
