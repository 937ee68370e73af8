import Testing

@testable import RigCore

/// Drives a `ProgramHost` tick by tick and checks every frame against every limit.
private struct HostRun {
    var source: ProgramHost
    var monitor: LimitMonitor
    var frame: [Double]
    var events: [PlayerEvent] = []
    /// What the host reported, as the loop would take it after each tick.
    var hostEvents: [HostEvent] = []
    var violations: [LimitViolation] = []
    var ticks = 0
    /// The loop's mailbox: what is posted reaches the source at the start of a tick.
    let mailbox = SourceMailbox()
    var delivered = SourceMailbox.buffer()

    init(rig: Rig, start: [Double], hosting program: HostedProgram? = nil) {
        source = ProgramHost(
            rig: rig, startPose: start, program: program, endsWithProgram: program != nil)
        monitor = LimitMonitor(axes: rig.axes, tickSeconds: rig.tickSeconds, startPose: start)
        frame = start
    }

    /// Runs until `until` holds (true) or `maxTicks` pass (false).
    @discardableResult
    mutating func run(maxTicks: Int = 20_000, until: (ProgramHost) -> Bool) -> Bool {
        for _ in 0..<maxTicks {
            _ = mailbox.deliver(to: &source, buffer: &delivered)
            if let e = source.tick(into: &frame) { events.append(e) }
            while let done = source.takeHostEvent() { hostEvents.append(done) }
            ticks += 1
            if let v = monitor.observe(frame) { violations.append(v) }
            if until(source) { return true }
        }
        return false
    }

    func post(_ request: ProgramRequest) { mailbox.post(request) }
    func post(_ command: MotionCommand) { mailbox.post(command) }
}

private let pan = servoAxis("pan", channel: 0, softMin: -90, softMax: 90, park: 0, maxVelocity: 60, maxAcceleration: 120)
private let tilt = servoAxis("tilt", channel: 1, softMin: -30, softMax: 45, park: -20, maxVelocity: 40, maxAcceleration: 80)
private let rig = simRig([pan, tilt])
private let threeSteps = Motion.stepped([
    Step(pose: [20, 10], settleSeconds: 0.1, label: "shot 1"),
    Step(pose: [40, 10], settleSeconds: 0.1, label: "shot 2"),
    Step(pose: [60, 10], settleSeconds: 0.1, label: "shot 3"),
])

@Suite struct ProgramHostTests {
    /// `rig play`'s use of the host: one program from the start, driven by the loop's
    /// trigger controls, and the source ends with it.
    @Test func aHostedProgramTakesTheTriggersControlsAndEndsWithTheProgram() {
        var run = HostRun(rig: rig, start: [0, 0], hosting: HostedProgram(name: "p", motion: threeSteps, trigger: .keyboard))
        #expect(run.source.progress.inProgram && run.source.progress.stepCount == 3)
        #expect(run.run { $0.isWaiting })
        #expect(run.source.currentStep == 0 && run.source.progress.phase == .waiting)
        // Go to step 3 (a keyboard `g 3`), then next past the last step.
        run.source.goTo(step: 2)
        #expect(run.run { $0.isWaiting && $0.currentStep == 2 })
        #expect(run.frame == [60, 10])
        run.source.advance()
        #expect(run.run { $0.isFinished })
        #expect(run.events.suffix(2) == [.programEnded(stopped: false), .finished])
        #expect(!run.events.contains(.ready(step: 1)))
        // Parked where the axes park, the finished program's progress kept.
        #expect(run.frame == [0, -20])
        #expect(run.source.progress.phase == .finished && run.source.progress.inProgram)
        #expect(run.violations.isEmpty)
    }

    @Test func aManualProgramWaitsAtEachStepAndNextGoesOn() {
        var run = HostRun(rig: rig, start: [0, 0])
        run.post(.play(HostedProgram(name: "p", motion: threeSteps, trigger: .keyboard)))
        #expect(run.run { $0.isWaiting })
        #expect(run.source.currentStep == 0)
        #expect(run.source.progress.phase == .waiting)
        #expect(run.source.progress.step == 1 && run.source.progress.stepCount == 3)
        #expect(run.frame == [20, 10])
        run.post(.next)
        #expect(run.run { $0.isWaiting && $0.currentStep == 1 })
        #expect(run.frame == [40, 10])
        run.post(.next)
        #expect(run.run { $0.isWaiting && $0.currentStep == 2 })
        run.post(.next)
        // The last next ends the program: it parks and the source takes commands again.
        #expect(run.run { $0.player == nil })
        #expect(run.frame == [0, -20])
        #expect(run.source.progress.phase == .idle)
        #expect(!run.source.isFinished)
        #expect(run.events.contains(.programEnded(stopped: false)))
        #expect(!run.events.contains(.finished))
        #expect(run.violations.isEmpty)
    }

    @Test func aProgramPreparedFromTheRestPoseIsTakenWithoutBuildingAPlayer() {
        var run = HostRun(rig: rig, start: [0, 0])
        var program = HostedProgram(name: "p", motion: threeSteps, trigger: .auto)
        program.prepare(rig: rig, from: [0, 0])
        run.post(.play(program))
        #expect(run.run { $0.currentStep == 2 && $0.isWaiting || $0.player == nil && $0.programsStarted == 1 })
        #expect(run.source.programsStarted == 1)
        #expect(run.source.playersBuiltInTick == 0)
        // Prepared from somewhere the rig is not: the loop builds the player from where it is.
        #expect(run.run { $0.player == nil })
        var stale = HostedProgram(name: "q", motion: threeSteps, trigger: .auto)
        stale.prepare(rig: rig, from: [5, 5])
        run.post(.play(stale))
        #expect(run.run { $0.programsStarted == 2 && $0.player == nil })
        #expect(run.source.playersBuiltInTick == 1)
        #expect(run.violations.isEmpty)
    }

    @Test func aPlayerBuiltInTheTickIsTheProgramsOwn() {
        // Prepared from somewhere the rig is not: the player the loop builds still ends
        // where the program does when it does not park (jog's preview), not at the park pose.
        var run = HostRun(rig: rig, start: [0, 0])
        var program = HostedProgram(name: "preview", motion: threeSteps, trigger: .auto)
        program.parks = false
        program.prepare(rig: rig, from: [5, 5])
        run.post(.play(program))
        #expect(run.run { $0.programsStarted == 1 && $0.player == nil })
        #expect(run.source.playersBuiltInTick == 1)
        guard case .stepped(let steps) = threeSteps, let last = steps.last else {
            Issue.record("threeSteps is stepped")
            return
        }
        #expect(zip(run.frame, last.pose).allSatisfy { abs($0 - $1) < 1e-9 }, "ended at the last step, not parked")
        #expect(run.violations.isEmpty)
    }

    @Test func backAndRedoMoveToThePreviousAndTheSameStep() {
        var run = HostRun(rig: rig, start: [0, 0])
        run.post(.play(HostedProgram(name: "p", motion: threeSteps, trigger: .keyboard, firstStep: 2)))
        #expect(run.run { $0.isWaiting })
        #expect(run.source.currentStep == 2)
        #expect(run.frame == [60, 10])
        run.post(.back)
        #expect(run.run { $0.isWaiting && $0.currentStep == 1 })
        #expect(run.frame == [40, 10])
        let readies = run.events.filter { if case .ready = $0 { true } else { false } }.count
        run.post(.redo)
        // The step is shot again where the rig stands: ready once more, nothing moves.
        run.run(maxTicks: 50) { _ in false }
        #expect(run.source.isWaiting && run.source.currentStep == 1)
        #expect(run.frame == [40, 10])
        #expect(run.events.filter { if case .ready = $0 { true } else { false } }.count == readies + 1)
        run.post(.back)
        #expect(run.run { $0.isWaiting && $0.currentStep == 0 })
        // No step before the first: refused, nothing moves.
        let refused = run.source.refusedRequests
        run.post(.back)
        run.run(maxTicks: 5) { _ in false }
        #expect(run.source.refusedRequests == refused + 1)
        #expect(run.hostEvents.last == .refused(.back, .atFirstStep))
        #expect(run.frame == [20, 10])
        #expect(run.violations.isEmpty)
    }

    /// The host says what it did, typed: a program started, each refused request with why,
    /// and how each program ended (played out, stopped), once each.
    @Test func theHostReportsStartsRefusalsAndEndsAsEvents() {
        var run = HostRun(rig: rig, start: [0, 0])
        run.post(.next)
        run.run(maxTicks: 2) { _ in false }
        #expect(run.hostEvents == [.refused(.next, .noProgram)])
        run.hostEvents = []
        run.post(.play(HostedProgram(name: "a", motion: threeSteps, trigger: .keyboard)))
        #expect(run.run { $0.isWaiting })
        run.post(.play(HostedProgram(name: "b", motion: threeSteps, trigger: .auto)))
        run.post(.resume)
        run.run(maxTicks: 2) { _ in false }
        #expect(run.hostEvents == [.started(program: "a", steps: 3), .refused(.play, .notAtRest), .refused(.resume, .notPaused)])
        run.hostEvents = []
        run.post(.stop)
        #expect(run.run { $0.player == nil && $0.isAtRest })
        #expect(run.hostEvents == [.ended(program: "a", .stopped)])
        run.hostEvents = []
        run.post(.play(HostedProgram(name: "b", motion: threeSteps, trigger: .auto)))
        #expect(run.run { $0.programsStarted == 2 && $0.player == nil })
        #expect(run.hostEvents == [.started(program: "b", steps: 3), .ended(program: "b", .completed)])
        #expect(run.violations.isEmpty)
    }

    @Test func pauseHoldsAnAutoProgramAtTheNextStepAndResumeGoesOn() {
        var run = HostRun(rig: rig, start: [0, 0])
        run.post(.play(HostedProgram(name: "p", motion: threeSteps, trigger: .auto)))
        run.post(.pause)
        #expect(run.run { $0.isWaiting })
        #expect(run.source.currentStep == 0)
        #expect(run.source.progress.phase == .paused)
        // Held: many ticks later it still waits at step 1.
        run.run(maxTicks: 500) { _ in false }
        #expect(run.source.currentStep == 0 && run.source.isWaiting)
        run.post(.resume)
        #expect(run.run { $0.player == nil })
        #expect(run.events.filter { if case .ready = $0 { true } else { false } }.count == 3)
        #expect(run.violations.isEmpty)
    }

    /// `interval:S` means what it means in `rig play`: shot start to shot start (each
    /// step's settled moment), S apart to the tick, the player starting each move late
    /// enough; and the same ticks as a `Player` given the same plan.
    @Test func anIntervalProgramSettlesItsStepsTheIntervalApartAsPlayDoes() {
        var run = HostRun(rig: rig, start: [20, 10])
        run.post(.play(HostedProgram(name: "p", motion: threeSteps, trigger: .interval(seconds: 3))))
        var readyTicks: [Int] = []
        for _ in 0..<3 {
            #expect(run.run { $0.isWaiting })
            readyTicks.append(run.ticks)
            #expect(run.run { !$0.isWaiting })
        }
        #expect(zip(readyTicks, readyTicks.dropFirst()).allSatisfy { $1 - $0 == 300 }, "ready at ticks \(readyTicks)")
        #expect(run.violations.isEmpty)

        // rig play's host: a Player with the same plan, advanced at every ready.
        var player = Player(rig: rig, motion: threeSteps, startPose: [20, 10], shooting: ShootingPlan(intervalSeconds: 3))
        var out = [Double](repeating: 0, count: rig.axes.count)
        var playTicks: [Int] = []
        for tick in 1...5000 where playTicks.count < 3 {
            if case .ready? = player.tick(into: &out) {
                playTicks.append(tick)
                player.advance()
            }
        }
        #expect(zip(playTicks, playTicks.dropFirst()).map { $1 - $0 } == zip(readyTicks, readyTicks.dropFirst()).map { $1 - $0 })
    }

    @Test func stopBrakesParksAndTheSourceTakesCommandsAgain() {
        var run = HostRun(rig: rig, start: [0, 0])
        run.post(.play(HostedProgram(name: "p", motion: threeSteps, trigger: .auto)))
        #expect(run.run { $0.velocities[0] > 30 })
        run.post(.stop)
        #expect(run.run { $0.player == nil })
        #expect(run.events.contains(.programEnded(stopped: true)))
        #expect(run.frame == [0, -20])
        // Commands work again, from where the program left the rig.
        run.post(.goTo(pose: [10, nil]))
        #expect(run.run { $0.progress.phase == .moving })
        #expect(run.run { $0.progress.phase == .idle })
        #expect(run.frame == [10, -20])
        #expect(run.violations.isEmpty)
    }

    @Test func playIsRefusedWhileTheRigMovesAndCommandsAreDroppedWhileAProgramPlays() {
        var run = HostRun(rig: rig, start: [0, 0])
        run.post(.jog(velocityFractions: [1, 0]))
        run.run(maxTicks: 3) { _ in false }
        run.post(.play(HostedProgram(name: "p", motion: threeSteps, trigger: .auto)))
        run.run(maxTicks: 1) { _ in false }
        #expect(run.source.player == nil)
        #expect(run.source.refusedRequests == 1)
        // The deadman stops the jog; then play is accepted.
        #expect(run.run { $0.progress.phase == .idle })
        run.post(.play(HostedProgram(name: "p", motion: threeSteps, trigger: .keyboard)))
        run.run(maxTicks: 1) { _ in false }
        #expect(run.source.player != nil)
        run.post(.jog(velocityFractions: [1, 1]))
        run.run(maxTicks: 1) { _ in false }
        #expect(run.source.droppedCommands == 1)
        #expect(run.run { $0.isWaiting })
        #expect(run.frame == [20, 10])
        #expect(run.violations.isEmpty)
    }

    @Test func theSessionStopFinishesAProgramThenTheSourceParksAndFinishes() {
        var run = HostRun(rig: rig, start: [0, 0])
        run.post(.play(HostedProgram(name: "p", motion: threeSteps, trigger: .keyboard)))
        #expect(run.run { $0.isWaiting })
        run.source.stop()
        #expect(run.run { $0.isFinished })
        #expect(run.frame == [0, -20])
        // One stop, reported once (the program's), though both sources brake and park.
        #expect(run.events.filter { $0 == .programEnded(stopped: true) }.count == 1)
        #expect(run.events.last == .finished)
        #expect(run.violations.isEmpty)
    }

    @Test func anEmptyProgramEndsAtOnceAndPauseNeedsSteps() {
        var run = HostRun(rig: rig, start: [0, 0])
        run.post(.play(HostedProgram(name: "p", motion: .stepped([]), trigger: .auto)))
        run.run(maxTicks: 2) { _ in false }
        // An empty program is over at once.
        #expect(run.source.player == nil)
        run.post(.pause)
        run.run(maxTicks: 1) { _ in false }
        #expect(!run.source.isPaused)
    }
}

extension ProgramHostTests {
    /// A program stopped while it waits at a step, then the same program played again at
    /// once: it plays (the server's "resume" and a second Start rely on it).
    @Test func aStoppedProgramCanBePlayedAgainAtOnce() {
        var run = HostRun(rig: rig, start: [0, 0])
        let manual = HostedProgram(name: "p", motion: threeSteps, trigger: .keyboard)
        run.post(.play(manual))
        #expect(run.run { $0.isWaiting })
        run.post(.stop)
        #expect(run.run { $0.player == nil })
        run.post(.play(manual))
        #expect(run.run(maxTicks: 2000) { $0.isWaiting }, "refused \(run.source.refusedRequests), phase \(run.source.progress.phase)")
    }
}
