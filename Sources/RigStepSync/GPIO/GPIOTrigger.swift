import FoundationEssentials
import Glibc
import Logging
import RigCore
import RigRuntime
import Synchronization

/// Push buttons step the program locally (trigger `gpio`): continue advances when the rig
/// is ready at a step (one press kept if it comes while moving), stop stops the program.
/// The continue LED is lit while the rig waits for a press. Without GPIO on the machine
/// it says so once and falls back to Enter in the terminal.
public final class GPIOTrigger: StepTrigger, @unchecked Sendable {
    private let config: ButtonsConfig
    private let logger: Logger
    private let display: @Sendable (String) -> Void
    private let openLines: () throws -> GPIOLines
    private let lock = Mutex<Void>(())
    private var lines: GPIOLines?
    private var fallback: KeyboardTrigger?
    private let gate = AdvanceGate()
    private var running = true
    private var debouncer: ButtonDebouncer
    /// Where the stop button goes (the session's stop request), once started.
    private var onStop: (@Sendable () -> Void)?

    /// - Parameter openLines: opens the buttons and LEDs (libgpiod by default; a fake in tests).
    public init(
        config: ButtonsConfig, logger: Logger, display: @escaping @Sendable (String) -> Void,
        openLines: (() throws -> GPIOLines)? = nil
    ) {
        self.config = config
        self.logger = logger
        self.display = display
        self.openLines = openLines ?? { try LibgpiodLines(config: config) }
        debouncer = ButtonDebouncer(debounceSeconds: config.debounceSeconds)
    }

    public var label: String { lines == nil && fallback != nil ? "keyboard (no GPIO)" : "buttons on \(config.chip)" }

    /// Every line it opens (buttons and LEDs) on its chip: `gpio-gpiochip0-13`, …
    public var exclusiveResources: [String] { config.lockNames }

    public func start(_ controls: StepControls) throws {
        lock.withLock { _ in onStop = controls.stop }
        gate.start(advance: controls.advance)
        do {
            let lines = try openLines()
            self.lines = lines
            SystemThread.start(name: "rig-gpio") { [self] in readLoop() }
        } catch {
            display("no GPIO buttons: \(error); press Enter in the terminal instead")
            let keyboard = KeyboardTrigger(prompt: display)
            fallback = keyboard
            try keyboard.start(controls)
        }
    }

    public func handle(_ event: PlayerEvent, stepCount: Int) {
        if let fallback { return fallback.handle(event, stepCount: stepCount) }
        guard case .ready(let step) = event, !gate.ready() else { return }
        lock.withLock { _ in lines }?.setLED(.continue, on: true)
        display("step \(step + 1) of \(stepCount) ready: press the continue button")
    }

    public func stop() {
        fallback?.stop()
        gate.stop()
        lock.withLock { _ in
            running = false
            lines?.setLED(.continue, on: false)
        }
    }

    /// One debounced edge from the buttons (the reader thread, or a test).
    func buttonEdge(_ edge: GPIOEdge) {
        let (button, lines, stop) = lock.withLock { _ in (debouncer.feed(edge), self.lines, onStop) }
        switch button {
        case nil:
            return
        case .continue:
            if gate.press() { lines?.setLED(.continue, on: false) }
        case .stop:
            display("stop button: stopping")
            stop?()
        }
    }

    private func readLoop() {
        guard let lines = lock.withLock({ _ in self.lines }) else { return }
        while lock.withLock({ _ in running }) {
            do {
                for edge in try lines.readEdges(timeoutSeconds: 0.2) { buttonEdge(edge) }
            } catch {
                logger.error("GPIO buttons failed: \(error)")
                return
            }
        }
        lines.close()
    }
}
