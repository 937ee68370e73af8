import Testing

@testable import RigStepSync

/// Every rule of the Wait-For-Input cycle, fed input by input.
@Suite struct BUICycleTests {
    func machine(steps: Int = 3, _ configure: (inout BUICycle.Settings) -> Void = { _ in }) -> BUICycle {
        var settings = BUICycle.Settings()
        configure(&settings)
        return BUICycle(stepCount: steps, settings: settings)
    }

    /// The actions without log lines.
    func act(_ m: inout BUICycle, _ input: BUICycle.Input) -> [BUICycle.Action] {
        m.handle(input).filter { if case .log = $0 { false } else { true } }
    }

    @Test func oneWaitMovesSettlesAndPressesOnce() {
        var m = machine()
        #expect(act(&m, .ready(step: 0)) == [])
        #expect(act(&m, .continueAvailable(true)) == [.advance])
        #expect(act(&m, .ready(step: 1)) == [.notifyContinue(.down), .schedule(.releaseContinue, afterSeconds: 0.1)])
        #expect(act(&m, .timer(.releaseContinue)) == [.notifyContinue(.up)])
        // Cascable takes continue away; a duplicate write of 1 is no new wait.
        #expect(act(&m, .continueAvailable(false)) == [])
        #expect(m.presses == 1)
    }

    @Test func repeatedContinueAvailableOneIsNotASecondWait() {
        var m = machine()
        _ = act(&m, .ready(step: 0))
        #expect(act(&m, .continueAvailable(true)) == [.advance])
        #expect(act(&m, .continueAvailable(true)) == [])
        _ = act(&m, .ready(step: 1))
        #expect(m.presses == 1)
    }

    @Test func neverPressesWhileContinueIsUnavailable() {
        var m = machine()
        _ = act(&m, .ready(step: 0))
        _ = act(&m, .continueAvailable(true))
        // Dropped during the move: the move finishes, nothing is pressed.
        #expect(act(&m, .continueAvailable(false)) == [])
        #expect(act(&m, .ready(step: 1)) == [])
        #expect(m.presses == 0)
    }

    @Test func aWaitDuringTheFirstMoveIsServedWhenReady() {
        var m = machine()
        #expect(act(&m, .continueAvailable(true)) == [])
        #expect(act(&m, .ready(step: 0)) == [.advance])
        #expect(act(&m, .ready(step: 1)).first == .notifyContinue(.down))
    }

    @Test func theWaitAfterTheLastStepEndsTheProgramWithoutAPress() {
        var m = machine(steps: 2)
        _ = act(&m, .ready(step: 0))
        _ = act(&m, .continueAvailable(true))
        _ = act(&m, .ready(step: 1))
        _ = act(&m, .timer(.releaseContinue))
        _ = act(&m, .continueAvailable(false))
        #expect(act(&m, .continueAvailable(true)) == [.advance])
        #expect(m.ended)
        #expect(m.presses == 1)
    }

    @Test func stopRecipeAtEndPressesStopOnlyWhenAvailable() {
        var m = machine(steps: 1) { $0.stopRecipeAtEnd = true }
        _ = act(&m, .ready(step: 0))
        #expect(act(&m, .continueAvailable(true)) == [.advance])
        _ = act(&m, .continueAvailable(false))
        _ = act(&m, .stopAvailable(true))
        #expect(act(&m, .continueAvailable(true)) == [.notifyStop(.down), .schedule(.releaseStop, afterSeconds: 0.1)])
        #expect(act(&m, .timer(.releaseStop)) == [.notifyStop(.up)])
    }

    @Test func aFaultMidMoveCancelsThePressAndPressesStopIfAsked() {
        var m = machine { $0.stopOnFault = true }
        _ = act(&m, .ready(step: 0))
        _ = act(&m, .stopAvailable(true))
        _ = act(&m, .continueAvailable(true))
        #expect(
            act(&m, .programEnded(stopped: true)) == [
                .notifyContinue(.cancelled), .notifyStop(.down), .schedule(.releaseStop, afterSeconds: 0.1),
            ])
        #expect(m.presses == 0)
    }

    @Test func exposureGuardDelaysTheMove() {
        var m = machine { $0.exposureGuardSeconds = 2 }
        _ = act(&m, .ready(step: 0))
        #expect(act(&m, .continueAvailable(true)) == [.schedule(.exposureGuard, afterSeconds: 2)])
        #expect(act(&m, .timer(.exposureGuard)) == [.advance])
    }

    @Test func exposureGuardAbandonedWhenContinueIsWithdrawn() {
        var m = machine { $0.exposureGuardSeconds = 2 }
        _ = act(&m, .ready(step: 0))
        _ = act(&m, .continueAvailable(true))
        _ = act(&m, .continueAvailable(false))
        #expect(act(&m, .timer(.exposureGuard)) == [])
        // The next wait is served normally.
        #expect(act(&m, .continueAvailable(true)) == [.schedule(.exposureGuard, afterSeconds: 2)])
    }

    @Test func startingHereTheFirstWaitMovesToStepOne() {
        var m = BUICycle(stepCount: 2, settings: BUICycle.Settings(), startsBeforeFirstStep: true)
        #expect(act(&m, .continueAvailable(true)) == [.advance])
        #expect(act(&m, .ready(step: 0)).first == .notifyContinue(.down))
    }

    @Test func theRigsOwnContinueButtonServesTheWaitOnce() {
        var m = machine()
        _ = act(&m, .ready(step: 0))
        // Not waiting: the button does nothing towards Cascable.
        #expect(act(&m, .manualContinue) == [])
        _ = act(&m, .continueAvailable(true))
        #expect(act(&m, .manualContinue) == [.notifyContinue(.down), .schedule(.releaseContinue, afterSeconds: 0.1)])
        // The move already started finishes, but the wait was served: no second press.
        #expect(act(&m, .ready(step: 1)) == [])
        #expect(m.presses == 1)
    }

    @Test func theRigsOwnStopButtonPressesStopOnlyWhenAllowed() {
        var m = machine()
        #expect(act(&m, .manualStop) == [])
        _ = act(&m, .stopAvailable(true))
        #expect(act(&m, .manualStop) == [.notifyStop(.down), .schedule(.releaseStop, afterSeconds: 0.1)])
    }
}

@Suite struct BUIMessageTests {
    @Test func theUserMessageIsHiddenWhileContinueIsUnavailable() {
        #expect(BUIService.visibleMessage("Turn the ring", continueAvailable: true) == "Turn the ring")
        let hidden = BUIService.visibleMessage("Turn the ring", continueAvailable: false)
        #expect(hidden != "Turn the ring" && hidden.contains("running"))
        // What replaces it fits the BLEControl LCD line whole (15 bytes with the terminator in 16).
        #expect(hidden.utf8.count <= 15)
    }
}
