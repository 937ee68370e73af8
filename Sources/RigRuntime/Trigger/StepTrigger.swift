import FoundationEssentials
import Glibc
import RigCore
import RigSky
import Synchronization

/// What advances a stepped program: it hears the player's events and drives the program
/// through `StepControls` (next, and whatever else it offers: redo, go to, home, stop).
/// Its methods are called on the session's event thread, never the loop thread. The
/// session starts it after the output, hands it the controls, and stops it on every way out.
public protocol StepTrigger: AnyObject {
    /// A short name for the live view ("keyboard", "interval 2 s", "Cascable").
    var label: String { get }
    /// Starts listening; `controls.advance` moves the program on.
    func start(_ controls: StepControls) throws
    /// The player passed `event`.
    func handle(_ event: PlayerEvent, stepCount: Int)
    /// The program is over (normally, by a stop, or by a fault).
    func stop()
    /// Hardware the trigger uses exclusively (GPIO lines), as `HardwareLock` names.
    var exclusiveResources: [String] { get }
    /// True when the trigger writes to the output's text display itself (Cascable step
    /// sync shows its messages); otherwise the session shows progress there.
    var drivesTextDisplay: Bool { get }
    /// After the run: what the shot log should warn about, if anything (a Cascable recipe
    /// that waited a different number of times than the program has steps).
    var closingWarning: String? { get }
}

extension StepTrigger {
    public var exclusiveResources: [String] { [] }
    public var drivesTextDisplay: Bool { false }
    public var closingWarning: String? { nil }
}

/// What a trigger may ask of the running program: next, and (keyboard `r`, `b`, `g`, `q`;
/// Cascable `rig:` messages; the stop button) redo, go to a step, home, stop. The session
/// makes them from its loop; a test from counters.
public struct StepControls: Sendable {
    /// The program goes on (the loop takes it when the rig is ready).
    public var advance: @Sendable () -> Void
    public var redo: @Sendable () -> Void
    /// 0-based step.
    public var goTo: @Sendable (Int) -> Void
    public var stop: @Sendable () -> Void
    /// To the rig's home pose between steps (Cascable `rig: home`).
    public var goHome: @Sendable () -> Void

    public init(
        advance: @escaping @Sendable () -> Void, redo: @escaping @Sendable () -> Void = {},
        goTo: @escaping @Sendable (Int) -> Void = { _ in }, stop: @escaping @Sendable () -> Void = {},
        goHome: @escaping @Sendable () -> Void = {}
    ) {
        self.advance = advance
        self.redo = redo
        self.goTo = goTo
        self.stop = stop
        self.goHome = goHome
    }
}

/// The keyboard: Enter next, `r` redo, `b` back, `g N` go to step N, `h` home, `q` stop. Single
/// keys in a terminal (raw mode, restored on every way out), whole lines otherwise. A
/// press while the rig is still moving is kept for when it is ready, but only one:
/// pressing Enter twice never skips a step.
public final class KeyboardTrigger: StepTrigger, @unchecked Sendable {
    private let gate = AdvanceGate()
    private let prompt: @Sendable (String) -> Void
    private let state = Mutex<(controls: StepControls?, step: Int?, count: Int, stopped: Bool)>((nil, nil, 0, false))
    private let raw = Mutex<TerminalRawMode?>(nil)

    private let nudge: RampNudge?

    /// - Parameter nudge: the exposure ramp's nudge that `+` and `-` move (nil: the
    ///   program has no ramp; the keys say so).
    public init(prompt: @escaping @Sendable (String) -> Void, nudge: RampNudge? = nil) {
        self.prompt = prompt
        self.nudge = nudge
    }
    public var label: String { "keyboard (Enter)" }

    public func start(_ controls: StepControls) throws {
        state.withLock { $0.controls = controls }
        gate.start(advance: controls.advance)
        let terminal = TerminalRawMode()
        raw.withLock { $0 = terminal }
        SystemThread.start(name: "rig-keyboard") { [self, gate, prompt] in
            if let terminal {
                readKeys()
                terminal.restore()
            } else {
                while !isStopped, let line = readLine(strippingNewline: true) {
                    if let command = StepKeyReader.parse(line: line) { apply(command) }
                }
            }
            // stdin ended (not a stop): no Enter can come any more, and without one the
            // program would wait at the next step forever.
            if !isStopped, gate.isRunning {
                prompt("stdin ended: nothing can press Enter any more; stopping")
                controls.stop()
            }
        }
    }

    private var isStopped: Bool { state.withLock { $0.stopped } }

    /// Single keys from the raw terminal, polled so `stop()` ends the thread.
    private func readKeys() {
        var reader = StepKeyReader()
        TerminalRawMode.readKeys(
            until: { isStopped },
            { byte in
                let typing = reader.typedStep
                if let command = reader.feed(byte) {
                    apply(command)
                } else if let digits = reader.typedStep, digits != typing {
                    prompt("go to step: \(digits)")
                }
            })
    }

    func apply(_ command: StepKeyCommand) {
        let (controls, step, count) = state.withLock { ($0.controls, $0.step, $0.count) }
        switch command {
        case .next:
            gate.press()
        case .redo:
            guard let controls else { return }
            gate.reset()
            controls.redo()
        case .back:
            guard let controls, let step else { return }
            gate.reset()
            controls.goTo(max(step - 1, 0))
        case .goTo(let n):
            guard let controls else { return }
            guard (1...max(count, 1)).contains(n) else {
                prompt("no step \(n): the program has steps 1…\(count)")
                return
            }
            gate.reset()
            controls.goTo(n - 1)
        case .home:
            guard let controls else { return }
            gate.reset()
            controls.goHome()
        case .stop:
            controls?.stop()
        case .nudge(let delta):
            prompt(RampNudge.keyReply(nudge, by: delta))
        }
    }

    public func handle(_ event: PlayerEvent, stepCount: Int) {
        let keys = "g N go to step N · h home · q stop"
        switch event {
        case .ready(let step):
            state.withLock {
                $0.step = step
                $0.count = stepCount
            }
            guard !gate.ready() else { return }
            let what = step + 1 < stepCount ? "move to step \(step + 2) of \(stepCount)" : "finish"
            prompt("step \(step + 1) of \(stepCount) ready: Enter to \(what) · r redo · b back · \(keys)")
        case .readyAtHome(let after):
            state.withLock { $0.count = stepCount }
            guard !gate.ready() else { return }
            let what = after + 1 < stepCount ? "move to step \(after + 2) of \(stepCount)" : "finish"
            prompt("at home: Enter to \(what) · \(keys)")
        default:
            return
        }
    }

    public func stop() {
        state.withLock { $0.stopped = true }
        raw.withLock { $0 }?.restore()
        gate.stop()
    }
}
