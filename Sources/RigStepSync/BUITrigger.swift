import Dispatch
import FoundationEssentials
import Glibc
import Logging
import RigCore
import RigDBus
import RigFormat
import RigRuntime
import Synchronization

/// One Wait-For-Input cycle as it happened, for the cycle log and the summary.
public struct BUICycleRecord: Sendable, Equatable {
    public var step: Int
    /// Seconds since the session started.
    public var waitAt: Double
    public var moveStartAt: Double?
    public var readyAt: Double?
    public var pressAt: Double?
    public var releaseAt: Double?

    /// (release − wait) − (move + settle + press): what the rig added on top of the motion.
    public func overheadSeconds(pressSeconds: Double) -> Double? {
        guard let moveStartAt, let readyAt, let releaseAt else { return nil }
        return (releaseAt - waitAt) - (readyAt - moveStartAt) - pressSeconds
    }
}

/// Steps a program on Cascable's Wait For Input: the trigger `bui`. Owns the BUI
/// peripheral and feeds the `BUICycle` state machine with Cascable's writes, the
/// player's events and its own timers; carries out what the machine decides.
public final class BUITrigger: StepTrigger, @unchecked Sendable {
    public let settings: BUICycle.Settings
    private let config: StepSyncConfig
    private let connection: DBusConnection
    private let logger: Logger
    private let display: @Sendable (String) -> Void
    /// Cascable's messages and the step go to the display (when there is one).
    public var drivesTextDisplay: Bool { textDisplay != nil }
    private let textDisplay: TextDisplay?
    private let queue = DispatchQueue(label: "rig.bui")
    private let lock = Mutex<Void>(())
    private var cycle: BUICycle
    private var advance: (@Sendable () -> Void)?
    private var peripheral: BUIPeripheral?
    /// The latest cycles (at most `keptRecords`): a recipe of any length keeps memory flat.
    private var records: [BUICycleRecord] = []
    private static let keptRecords = 64
    /// Overheads of every pressed cycle, in 0.1 ms bins up to 1 s (the last bin: longer).
    private var overheadBins = [Int](repeating: 0, count: 10_001)
    private var overheadCount = 0
    private var overheadSum = 0.0
    private var overheadMax = 0.0
    private var stepCount: Int
    private var stopped = false
    private let clock = MonotonicClock()
    private let epoch = MonotonicClock().now()
    private let openLines: (() throws -> GPIOLines)?
    private var lines: GPIOLines?
    private var debouncer: ButtonDebouncer
    private let buttons: ButtonsConfig?
    /// The message line last shown (live view and LCD), to show each change once.
    private var shownMessage: String?
    private let stepLabels: [String]
    private let controls = Mutex<StepControls?>(nil)

    /// - Parameters:
    ///   - display: a line for the live view (the user message, each cycle).
    ///   - textDisplay: the output's LCD, if it has one.
    public init(
        connection: DBusConnection, config: StepSyncConfig, stepCount: Int, stopRecipeAtEnd: Bool,
        startsBeforeFirstStep: Bool = false, logger: Logger, display: @escaping @Sendable (String) -> Void,
        textDisplay: TextDisplay? = nil, buttons: ButtonsConfig? = nil, openLines: (() throws -> GPIOLines)? = nil,
        stepLabels: [String] = []
    ) {
        self.stepLabels = stepLabels
        var settings = BUICycle.Settings()
        settings.pressSeconds = config.pressSeconds
        settings.exposureGuardSeconds = config.exposureGuardSeconds
        settings.stopRecipeAtEnd = stopRecipeAtEnd
        settings.stopOnFault = config.stopOnFault
        self.settings = settings
        self.config = config
        self.connection = connection
        self.logger = logger
        self.display = display
        self.textDisplay = textDisplay
        self.stepCount = stepCount
        cycle = BUICycle(stepCount: stepCount, settings: settings, startsBeforeFirstStep: startsBeforeFirstStep)
        debouncer = ButtonDebouncer(debounceSeconds: buttons?.debounceSeconds ?? 0.03)
        self.buttons = buttons
        self.openLines = openLines ?? buttons.map { config in { try LibgpiodLines(config: config) } }
    }

    public var label: String { "Cascable (\(peripheral?.advertisedName ?? config.adapter))" }

    /// After the run: a warning when the recipe waited for input a different number of
    /// times than the program has steps (the pictures and the poses no longer pair up).
    public var closingWarning: String? {
        let (allWaits, homeWaits) = lock.withLock { _ in (cycle.waits, cycle.homeWaits) }
        // A `rig: home` wait is an excursion, not one of the program's steps.
        let waits = allWaits - homeWaits
        guard waits > 0, waits != stepCount else { return nil }
        let home = homeWaits > 0 ? " (not counting \(homeWaits) for rig: home)" : ""
        return
            "the Cascable recipe waited for input \(waits) time\(waits == 1 ? "" : "s")\(home); the program has \(stepCount) steps: check that its pictures match the poses"
    }

    /// The GPIO buttons and LEDs it opens, if the rig has them (locked like `GPIOTrigger`'s).
    public var exclusiveResources: [String] {
        guard let buttons, openLines != nil else { return [] }
        return buttons.lockNames
    }

    /// The peripheral, once started (tests read its state).
    public var accessory: BUIPeripheral? { lock.withLock { _ in peripheral } }

    /// The latest cycles, oldest first (the last 64).
    public var cycleRecords: [BUICycleRecord] { lock.withLock { _ in records } }

    public func start(_ controls: StepControls) throws {
        // Where `rig: step` messages send the rig, and what presses continue.
        self.controls.withLock { $0 = controls }
        lock.withLock { _ in self.advance = controls.advance }
        let peripheral = BUIPeripheral(
            connection: connection, config: config, logger: logger,
            onInput: { [weak self] input in self?.feed(input) },
            onMessage: { [weak self] message in self?.showMessage(message) })
        let done = DispatchSemaphore(value: 0)
        let failure = Mutex<Error?>(nil)
        Task {
            do { try await peripheral.start() } catch { failure.withLock { $0 = error } }
            done.signal()
        }
        done.wait()
        if let error = failure.withLock({ $0 }) { throw error }
        lock.withLock { _ in self.peripheral = peripheral }
        display("Cascable: look for \"\(peripheral.advertisedName)\" in a recipe's Wait For Input block")
        startButtonsAndLEDs()
    }

    /// The rig's own buttons press towards Cascable; the LEDs show the state: both blink
    /// while no Cascable is connected, green while continue is possible, red while stop is.
    private func startButtonsAndLEDs() {
        guard let openLines else { return }
        let lines: GPIOLines
        do { lines = try openLines() } catch {
            display("no GPIO buttons or LEDs: \(error)")
            return
        }
        lock.withLock { _ in self.lines = lines }
        SystemThread.start(name: "rig-bui-buttons") { [self] in
            guard let lines = lock.withLock({ _ in self.lines }) else { return }
            var blink = false
            var lastLED = clock.now()
            while !lock.withLock({ _ in stopped }) {
                let edges = (try? lines.readEdges(timeoutSeconds: 0.1)) ?? []
                for edge in edges {
                    guard let button = lock.withLock({ _ in debouncer.feed(edge) }) else { continue }
                    feed(button == .continue ? .manualContinue : .manualStop)
                }
                let now = clock.now()
                guard now &- lastLED >= 500_000_000 else { continue }
                lastLED = now
                blink.toggle()
                let state = peripheral(connected: ())
                lines.setLED(.continue, on: state.connected ? state.continueAvailable : blink)
                lines.setLED(.stop, on: state.connected ? state.stopAvailable : blink)
            }
            lines.setLED(.continue, on: false)
            lines.setLED(.stop, on: false)
            lines.close()
        }
    }

    private func peripheral(connected: Void) -> (connected: Bool, continueAvailable: Bool, stopAvailable: Bool) {
        guard let peripheral = lock.withLock({ _ in self.peripheral }) else { return (false, false, false) }
        let state = peripheral.current
        return (peripheral.isConnected, state.continueAvailable, state.stopAvailable)
    }

    public func handle(_ event: PlayerEvent, stepCount: Int) {
        switch event {
        case .ready(let step):
            lock.withLock { _ in
                guard let i = records.indices.last, records[i].readyAt == nil else { return }
                if records[i].moveStartAt == nil {
                    // A wait that came while the rig was still moving starts counting now.
                    records[i].waitAt = now()
                } else {
                    records[i].readyAt = now()
                    records[i].step = step
                }
            }
            let state = accessory?.current
            let message = state.map { BUIService.visibleMessage($0.message, continueAvailable: $0.continueAvailable) } ?? ""
            textDisplay?.showText(line1: "step \(step + 1) of \(stepCount)", line2: message)
            feed(.ready(step: step))
        case .readyAtHome(let after):
            lock.withLock { _ in
                guard let i = records.indices.last, records[i].readyAt == nil, records[i].moveStartAt != nil else { return }
                records[i].readyAt = now()
            }
            textDisplay?.showText(line1: "at home", line2: "next: step \(after + 2)")
            feed(.readyAtHome(after: after))
        case .programEnded(let stopped):
            feed(.programEnded(stopped: stopped))
        case .moveStarted, .homeMoveStarted, .finished, .shot, .settled, .readyToStart, .readyToRejoin:
            break
        }
    }

    public func stop() {
        lock.withLock { _ in stopped = true }
        let summary = self.summary()
        if !summary.isEmpty { display(summary) }
        peripheral?.stop()
    }

    /// "N cycles, overhead p50/mean/max" over the cycles that pressed (p50 to 0.1 ms).
    public func summary() -> String {
        let (bins, count, sum, worst) = lock.withLock { _ in (overheadBins, overheadCount, overheadSum, overheadMax) }
        guard count > 0 else { return "" }
        var seen = 0
        var median = 0.0
        for (bin, n) in bins.enumerated() {
            seen += n
            if seen * 2 >= count {
                median = Double(bin) * 0.0001
                break
            }
        }
        return "Cascable: \(count) cycles; overhead beyond move, settle and press: p50 \(fixed(median * 1000, 1)) ms, "
            + "mean \(fixed(sum / Double(count) * 1000, 1)) ms, max \(fixed(worst * 1000, 1)) ms"
    }

    /// Adds a pressed cycle's overhead to the summary (fixed memory, however many cycles).
    private func count(overhead: Double) {
        guard overhead.isFinite else { return }
        let bin = overhead <= 0 ? 0 : overhead >= 1 ? overheadBins.count - 1 : min(Int(overhead * 10_000), overheadBins.count - 1)
        lock.withLock { _ in
            overheadBins[bin] += 1
            overheadCount += 1
            overheadSum += overhead
            overheadMax = max(overheadMax, overhead)
        }
    }

    private func now() -> Double { Double(clock.now() &- epoch) / 1e9 }

    /// Runs one input through the machine and carries out its actions.
    func feed(_ input: BUICycle.Input) {
        let (actions, advance, peripheral) = lock.withLock { _ -> ([BUICycle.Action], (@Sendable () -> Void)?, BUIPeripheral?) in
            // After the program, a new wait moves nothing (releases still go out).
            if stopped, input == .continueAvailable(true) { return ([], nil, nil) }
            let t = now()
            if case .continueAvailable(true) = input, !cycle.continueAvailable {
                if records.count >= Self.keptRecords { records.removeFirst(records.count - Self.keptRecords + 1) }
                records.append(BUICycleRecord(step: (cycle.readyStep ?? -1) + 1, waitAt: t))
            }
            return (cycle.handle(input), self.advance, self.peripheral)
        }
        for action in actions {
            switch action {
            case .advance:
                lock.withLock { _ in
                    if let i = records.indices.last, records[i].moveStartAt == nil { records[i].moveStartAt = now() }
                }
                advance?()
            case .goTo(let step):
                lock.withLock { _ in
                    if let i = records.indices.last, records[i].moveStartAt == nil { records[i].moveStartAt = now() }
                }
                controls.withLock { $0 }?.goTo(step)
            case .goHome:
                lock.withLock { _ in
                    if let i = records.indices.last, records[i].moveStartAt == nil { records[i].moveStartAt = now() }
                }
                controls.withLock { $0 }?.goHome()
            case .notifyContinue(let state):
                lock.withLock { _ in
                    guard let i = records.indices.last else { return }
                    if state == .down { records[i].pressAt = now() }
                    if state == .up { records[i].releaseAt = now() }
                }
                peripheral?.setContinueButton(state)
            case .notifyStop(let state):
                peripheral?.setStopButton(state)
            case .schedule(let timer, let seconds):
                queue.asyncAfter(deadline: .now() + seconds) { [weak self] in self?.feed(.timer(timer)) }
            case .log(let line):
                logger.info("cascable: \(line)")
            }
        }
        if case .continueAvailable = input { refreshMessage() }
        if case .timer(.releaseContinue) = input, let record = cycleRecords.last, let overhead = record.overheadSeconds(pressSeconds: settings.pressSeconds) {
            count(overhead: overhead)
            display("Cascable: step \(record.step + 1) shot cycle: overhead \(fixed(overhead * 1000, 1)) ms")
        }
    }

    private func showMessage(_ message: String) {
        switch BUICycle.Directive.parse(message, labels: stepLabels) {
        case nil: feed(.directive(nil))
        case .success(let directive): feed(.directive(directive))
        case .failure(let problem):
            logger.warning("cascable: \(problem)")
            display("Cascable: \(problem)")
            feed(.directive(nil))
        }
        refreshMessage()
    }

    /// Shows the user message, or that the recipe is running while Continue Available is
    /// 0 (`BUIService.visibleMessage`), on the live view and the LCD: once per change.
    private func refreshMessage() {
        guard let state = accessory?.current else { return }
        let visible = BUIService.visibleMessage(state.message, continueAvailable: state.continueAvailable)
        let (changed, step) = lock.withLock { _ -> (Bool, Int) in
            let changed = shownMessage != visible
            shownMessage = visible
            return (changed, (cycle.readyStep ?? 0) + 1)
        }
        guard changed else { return }
        display("Cascable: \(visible)")
        textDisplay?.showText(line1: "step \(step) of \(stepCount)", line2: visible)
    }
}
