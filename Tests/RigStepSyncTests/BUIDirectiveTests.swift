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
        #expect(BUICycle.Directive.parse("rig: home", labels: labels) == .success(.home))
        #expect(BUICycle.Directive.parse(" Rig:HOME ", labels: labels) == .success(.home))
        #expect(throws: BUICycle.DirectiveError.self) { try BUICycle.Directive.parse("rig: homes", labels: labels)?.get() }
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

    @Test func homeGoesThereAndPressesOnceSettledThenTheNextWaitGoesOn() {
        var m = BUICycle(stepCount: 3, settings: BUICycle.Settings())
        _ = act(&m, .ready(step: 0))
        _ = act(&m, .directive(.home))
        #expect(act(&m, .continueAvailable(true)) == [.goHome])
        // Settled at home having left step 1 (index 0): one press.
        #expect(act(&m, .readyAtHome(after: 0)) == [.notifyContinue(.down), .schedule(.releaseContinue, afterSeconds: 0.1)])
        #expect(m.presses == 1)
        _ = act(&m, .timer(.releaseContinue))
        _ = act(&m, .continueAvailable(false))
        // One wait only: the next moves on to step 2, the one after the step it left.
        #expect(act(&m, .continueAvailable(true)) == [.advance])
        #expect(m.waits == 2)
        #expect(m.homeWaits == 1)
    }

    @Test func homeWhileContinueIsWithdrawnFinishesTheMoveWithoutPressing() {
        var m = BUICycle(stepCount: 3, settings: BUICycle.Settings())
        _ = act(&m, .ready(step: 1))
        _ = act(&m, .directive(.home))
        #expect(act(&m, .continueAvailable(true)) == [.goHome])
        _ = act(&m, .continueAvailable(false))
        #expect(act(&m, .readyAtHome(after: 1)) == [])
        #expect(m.presses == 0)
        // The next wait goes on with step 3.
        #expect(act(&m, .continueAvailable(true)) == [.advance])
    }

    @Test func homeAfterTheLastStepThenAWaitCompletesTheProgram() {
        var m = BUICycle(stepCount: 2, settings: BUICycle.Settings())
        _ = act(&m, .ready(step: 1))
        _ = act(&m, .directive(.home))
        #expect(act(&m, .continueAvailable(true)) == [.goHome])
        #expect(!m.ended)
        _ = act(&m, .readyAtHome(after: 1))
        _ = act(&m, .timer(.releaseContinue))
        _ = act(&m, .continueAvailable(false))
        #expect(act(&m, .continueAvailable(true)) == [.advance])
        #expect(m.ended)
    }
}
