import Testing

@testable import RigStepSync

/// `rig:` User Messages: what the next Wait For Input does instead of one step.
@Suite struct BUIDirectiveTests {
    let labels = ["left", "centre", "right"]

    func act(_ m: inout BUICycle, _ input: BUICycle.Input) -> [BUICycle.Action] {
        m.handle(input).filter { if case .log = $0 { false } else { true } }
    }

    @Test func messagesParse() {
        #expect(BUICycle.Directive.parse("rig: step 3", labels: labels) == .success(.step(2)))
        #expect(BUICycle.Directive.parse("  RIG:  step  Centre ", labels: labels) == .success(.step(1)))
        #expect(BUICycle.Directive.parse("rig: stay", labels: labels) == .success(.stay))
        #expect(BUICycle.Directive.parse("Shoot the sky", labels: labels) == nil)
        #expect(throws: BUICycle.DirectiveError.self) { try BUICycle.Directive.parse("rig: step 4", labels: labels)?.get() }
        #expect(throws: BUICycle.DirectiveError.self) { try BUICycle.Directive.parse("rig: step top", labels: labels)?.get() }
        #expect(throws: BUICycle.DirectiveError.self) { try BUICycle.Directive.parse("rig: jump", labels: labels)?.get() }
        #expect(throws: BUICycle.DirectiveError.self) { try BUICycle.Directive.parse("rig: home", labels: labels)?.get() }
    }

    @Test func stepMovesThereAndPressesOnceSettled() {
        var m = BUICycle(stepCount: 3, settings: BUICycle.Settings())
        _ = act(&m, .ready(step: 1))
        _ = act(&m, .directive(.step(0)))
        #expect(act(&m, .continueAvailable(true)) == [.goTo(step: 0)])
        #expect(act(&m, .ready(step: 0)) == [.notifyContinue(.down), .schedule(.releaseContinue, afterSeconds: 0.1)])
        _ = act(&m, .timer(.releaseContinue))
        _ = act(&m, .continueAvailable(false))
        // One wait only: the next goes on from step 1 to step 2 as usual.
        #expect(act(&m, .continueAvailable(true)) == [.advance])
    }

    @Test func stayPressesWithoutMovingAndAnotherMessageCancels() {
        var m = BUICycle(stepCount: 3, settings: BUICycle.Settings())
        _ = act(&m, .ready(step: 0))
        _ = act(&m, .directive(.stay))
        #expect(act(&m, .continueAvailable(true)) == [.notifyContinue(.down), .schedule(.releaseContinue, afterSeconds: 0.1)])
        _ = act(&m, .timer(.releaseContinue))
        _ = act(&m, .continueAvailable(false))
        _ = act(&m, .directive(.step(2)))
        _ = act(&m, .directive(nil))
        #expect(act(&m, .continueAvailable(true)) == [.advance])
        #expect(m.waits == 2)
    }

    @Test func aStepMessageAtTheLastStepGoesBackInsteadOfEnding() {
        var m = BUICycle(stepCount: 2, settings: BUICycle.Settings())
        _ = act(&m, .ready(step: 1))
        _ = act(&m, .directive(.step(0)))
        #expect(act(&m, .continueAvailable(true)) == [.goTo(step: 0)])
        #expect(!m.ended)
    }
}
