import Logging
import RigCore
import RigRuntime
import Synchronization
import Testing

@testable import RigStepSync

/// Buttons and LEDs from a fake line source: the real trigger and debouncer on edges a
/// test writes, contact bounce included.
final class FakeLines: GPIOLines, @unchecked Sendable {
    let leds = Mutex<[GPIOEdge.Button: Bool]>([:])
    func readEdges(timeoutSeconds: Double) throws -> [GPIOEdge] { [] }
    func setLED(_ button: GPIOEdge.Button, on: Bool) { leds.withLock { $0[button] = on } }
    func close() {}
}

final class Counter: Sendable {
    let value = Mutex(0)
    func bump() { value.withLock { $0 += 1 } }
    var count: Int { value.withLock { $0 } }
}

@Suite struct GPIOTriggerTests {
    /// A press with bounce: down, up, down within a few ms, then released later.
    func bouncyPress(at t: Double) -> [GPIOEdge] {
        [
            GPIOEdge(button: .continue, pressed: true, timeSeconds: t),
            GPIOEdge(button: .continue, pressed: false, timeSeconds: t + 0.002),
            GPIOEdge(button: .continue, pressed: true, timeSeconds: t + 0.004),
            GPIOEdge(button: .continue, pressed: false, timeSeconds: t + 0.2),
            GPIOEdge(button: .continue, pressed: true, timeSeconds: t + 0.203),
            GPIOEdge(button: .continue, pressed: false, timeSeconds: t + 0.206),
        ]
    }

    @Test func debouncerCountsOneBouncyPressOnce() {
        var debouncer = ButtonDebouncer(debounceSeconds: 0.03)
        let presses = bouncyPress(at: 10).compactMap { debouncer.feed($0) }
        #expect(presses == [.continue])
        // A second, real press later counts again.
        #expect(bouncyPress(at: 11).compactMap { debouncer.feed($0) } == [.continue])
    }

    @Test func aQuickTapWhoseReleaseBouncesAwayStillLetsTheNextPressCount() {
        var debouncer = ButtonDebouncer(debounceSeconds: 0.03)
        // Pressed and released within the debounce time: the release is ignored…
        #expect(debouncer.feed(GPIOEdge(button: .continue, pressed: true, timeSeconds: 1)) == .continue)
        #expect(debouncer.feed(GPIOEdge(button: .continue, pressed: false, timeSeconds: 1.01)) == nil)
        // …but the next press, a second later, is a press.
        #expect(debouncer.feed(GPIOEdge(button: .continue, pressed: true, timeSeconds: 2)) == .continue)
    }

    @Test func aPressAdvancesOnlyAStepThatIsReadyAndLightsTheLED() throws {
        let lines = FakeLines()
        let trigger = GPIOTrigger(config: ButtonsConfig(), logger: Logger(label: "test"), display: { _ in }, openLines: { lines })
        let advances = Counter()
        try trigger.start(StepControls(advance: { advances.bump() }))
        trigger.handle(.ready(step: 0), stepCount: 3)
        #expect(lines.leds.withLock { $0[.continue] } == true)
        for edge in bouncyPress(at: 1) { trigger.buttonEdge(edge) }
        #expect(advances.count == 1)
        #expect(lines.leds.withLock { $0[.continue] } == false)
        // A press while moving is kept (once) for when the rig is ready.
        for edge in bouncyPress(at: 2) + bouncyPress(at: 3) { trigger.buttonEdge(edge) }
        #expect(advances.count == 1)
        trigger.handle(.ready(step: 1), stepCount: 3)
        #expect(advances.count == 2)
        trigger.handle(.ready(step: 2), stepCount: 3)
        #expect(advances.count == 2)
        trigger.stop()
    }

    @Test func stopButtonStopsTheProgram() throws {
        let trigger = GPIOTrigger(config: ButtonsConfig(), logger: Logger(label: "test"), display: { _ in }, openLines: { FakeLines() })
        let stops = Counter()
        try trigger.start(StepControls(advance: {}, stop: { stops.bump() }))
        trigger.buttonEdge(GPIOEdge(button: .stop, pressed: true, timeSeconds: 5))
        trigger.buttonEdge(GPIOEdge(button: .stop, pressed: false, timeSeconds: 5.001))
        #expect(stops.count == 1)
        trigger.stop()
    }

    @Test func noGPIOChipIsANoticeNotAFailure() throws {
        let lines = Mutex<[String]>([])
        var config = ButtonsConfig()
        config.chip = "no-such-gpiochip"
        let trigger = GPIOTrigger(config: config, logger: Logger(label: "test"), display: { line in lines.withLock { $0.append(line) } })
        try trigger.start(StepControls(advance: {}))
        #expect(lines.withLock { $0 }.first?.hasPrefix("no GPIO buttons: no GPIO chip \"no-such-gpiochip\"") == true)
        trigger.stop()
    }
}
