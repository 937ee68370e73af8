import Foundation
import RigCore

/// What advances a stepped program: it hears the player's events and calls `advance`.
/// Its methods are called on the session's event thread, never the loop thread.
public protocol StepTrigger: AnyObject {
    /// A short name for the live view ("keyboard", "interval 2 s", "Cascable").
    var label: String { get }
    /// Starts listening; `advance` moves the program on.
    func start(advance: @escaping @Sendable () -> Void) throws
    /// The player passed `event`.
    func handle(_ event: PlayerEvent, stepCount: Int)
    /// The program is over (normally, by a stop, or by a fault).
    func stop()
    /// Hardware the trigger uses exclusively (GPIO lines), as `HardwareLock` names.
    var exclusiveResources: [String] { get }
}

extension StepTrigger {
    public var exclusiveResources: [String] { [] }
}

/// Next step a fixed time after the rig has settled.
public final class IntervalTrigger: StepTrigger, @unchecked Sendable {
    public let seconds: Double
    private var advance: (@Sendable () -> Void)?
    private let queue = DispatchQueue(label: "rig.interval")

    public init(seconds: Double) { self.seconds = seconds }
    public var label: String { "interval \(format(seconds)) s" }
    public func start(advance: @escaping @Sendable () -> Void) throws { self.advance = advance }

    public func handle(_ event: PlayerEvent, stepCount: Int) {
        guard case .ready = event, let advance else { return }
        queue.asyncAfter(deadline: .now() + seconds) { advance() }
    }

    public func stop() { advance = nil }
}

/// Enter in the terminal. A line typed while the rig is still moving is kept for when
/// it is ready, but only one: pressing Enter twice never skips a step.
public final class KeyboardTrigger: StepTrigger, @unchecked Sendable {
    private let gate = AdvanceGate()
    private let prompt: @Sendable (String) -> Void
    /// stdin reached its end: no Enter can come any more (set before `start`). Without it
    /// the program would wait at the next step forever.
    public var onEndOfInput: (@Sendable () -> Void)?

    public init(prompt: @escaping @Sendable (String) -> Void) { self.prompt = prompt }
    public var label: String { "keyboard (Enter)" }

    public func start(advance: @escaping @Sendable () -> Void) throws {
        gate.start(advance: advance)
        let thread = Thread { [gate, onEndOfInput] in
            while readLine(strippingNewline: true) != nil { gate.press() }
            if gate.isRunning { onEndOfInput?() }
        }
        thread.name = "rig-keyboard"
        thread.start()
    }

    public func handle(_ event: PlayerEvent, stepCount: Int) {
        guard case .ready(let step) = event, !gate.ready() else { return }
        let what = step + 1 < stepCount ? "move to step \(step + 2) of \(stepCount)" : "finish"
        prompt("step \(step + 1) of \(stepCount) ready: take the shot, then press Enter to \(what)")
    }

    public func stop() {
        gate.stop()
    }
}
