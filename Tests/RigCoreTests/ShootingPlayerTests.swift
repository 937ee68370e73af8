import Testing

@testable import RigCore
@testable import RigFormat
@testable import RigSky

/// Shots, interval timing and backlash in the pure player: the simulated camera is the
/// player's own planned shot time (self-timed), or a test that answers `shotDone()`.
@Suite struct ShootingPlayerTests {
    let rig = simRig([
        servoAxis("pan", channel: 0, softMin: -90, softMax: 90),
        servoAxis("tilt", channel: 1, softMin: -45, softMax: 45),
    ])
    /// 0.2 s focus + 0.3 s exposure window, 0.5 s card write: 50 + 50 ticks at 100 Hz.
    let timing = ShotTiming(focusSeconds: 0.2, shutterHoldSeconds: 0.15, exposureWindowSeconds: 0.3, afterShotSeconds: 0.5, shotsPerStep: 1)

    func steps(_ poses: [[Double]], settle: Double = 0.2) -> Motion {
        .stepped(poses.enumerated().map { Step(pose: $1, settleSeconds: settle, label: "step \($0 + 1)") })
    }

    struct Played {
        var frames: [[Double]] = []
        var events: [(tick: Int, event: PlayerEvent)] = []
        func ticks(of wanted: (PlayerEvent) -> Bool) -> [Int] { events.filter { wanted($0.event) }.map(\.tick) }
        var shotStarts: [Int] { ticks { if case .shot(.started) = $0 { true } else { false } } }
        var shotEnds: [Int] { ticks { if case .shot(.ended) = $0 { true } else { false } } }
    }

    /// Ticks `player` to the end, advancing on `.ready`; `poke` runs before every tick.
    func play(_ player: inout Player, maxTicks: Int = 100_000, poke: (Int, inout Player, Played) -> Void = { _, _, _ in }) -> Played {
        var frame = player.positions
        var played = Played()
        var tick = 0
        while !player.isFinished, tick < maxTicks {
            poke(tick, &player, played)
            let event = player.tick(into: &frame)
            played.frames.append(frame)
            if let event {
                played.events.append((tick, event))
                if case .ready = event { player.advance() }
            }
            tick += 1
        }
        return played
    }

    @Test func everyStepIsShotAfterItSettlesAndNothingMovesWhileTheShutterIsOpen() throws {
        var player = Player(
            rig: rig, motion: steps([[-40, 0], [0, 10], [40, -10]]), startPose: [0, 0],
            shooting: ShootingPlan(timing: timing))
        let run = play(&player)
        let shots = run.events.compactMap { if case .shot(let s) = $0.event { s } else { nil } }
        #expect(
            shots == [
                .started(step: 0, bracket: 1), .ended(step: 0, bracket: 1),
                .started(step: 1, bracket: 1), .ended(step: 1, bracket: 1),
                .started(step: 2, bracket: 1), .ended(step: 2, bracket: 1),
            ])
        for (start, end) in zip(run.shotStarts, run.shotEnds) {
            #expect(end - start == 50, "the shot holds for its planned 0.5 s")
            let held = Set(run.frames[start...end].map { $0.map { $0.bitPattern } })
            #expect(held.count == 1, "a frame between shot start and end moved an axis")
        }
        // Each step's shot is taken at that step's pose, after its settle time.
        for (k, start) in run.shotStarts.enumerated() {
            #expect(run.frames[start] == [[-40.0, 0], [0, 10], [40, -10]][k])
        }
        // `.ready` (the trigger's cue) comes only after the step's last shot.
        #expect(run.ticks { if case .ready = $0 { true } else { false } } == run.shotEnds.map { $0 + 1 })
        #expect(LimitExcess(frames: run.frames, rig: rig, startPose: [0, 0]).relative <= 1e-6)
    }

    @Test func bracketsWaitForTheCardBetweenShots() {
        var t = timing
        t.shotsPerStep = 3
        var player = Player(rig: rig, motion: steps([[10, 0]]), startPose: [0, 0], shooting: ShootingPlan(timing: t))
        let run = play(&player)
        let brackets = run.events.compactMap { if case .shot(.started(_, let b)) = $0.event { b } else { nil } }
        #expect(brackets == [1, 2, 3])
        for (end, nextStart) in zip(run.shotEnds, run.shotStarts.dropFirst()) {
            #expect(nextStart - end == 50, "the next bracket starts after the 0.5 s after-shot wait")
            #expect(run.frames[end] == run.frames[nextStart])
        }
    }

    @Test func aRealCameraHoldsThePlayerUntilItReportsTheShotDone() {
        var player = Player(
            rig: rig, motion: steps([[10, 0], [20, 0]]), startPose: [0, 0],
            shooting: ShootingPlan(timing: timing, selfTimed: false))
        var reported: [Int] = []
        // The camera takes 3 s (bulb) for the first shot, at once for the second.
        let run = play(&player) { tick, player, played in
            guard let start = played.shotStarts.last, played.shotEnds.count < played.shotStarts.count else { return }
            let wait = played.shotStarts.count == 1 ? 300 : 1
            if tick - start == wait {
                player.shotDone()
                reported.append(tick)
            }
        }
        #expect(run.shotEnds == reported)
        #expect(run.shotEnds[0] - run.shotStarts[0] == 300)
        #expect(Set(run.frames[run.shotStarts[0]...run.shotEnds[0]].map { $0[0] }).count == 1)
    }

    @Test func anIntervalCountsFromShotStartToShotStart() {
        let motion = steps([[-20, 0], [-10, 0], [0, 0], [10, 0]])
        var player = Player(rig: rig, motion: motion, startPose: [-20, 0], shooting: ShootingPlan(timing: timing, intervalSeconds: 3))
        let run = play(&player)
        #expect(zip(run.shotStarts, run.shotStarts.dropFirst()).map { $1 - $0 } == [300, 300, 300])
        #expect(!run.events.contains { if case .shot(.slotMissed) = $0.event { true } else { false } })
        // The move starts late (not right after the shot): the rig arrives, settles 0.2 s, shoots.
        let moves = run.ticks { if case .moveStarted = $0 { true } else { false } }
        #expect(moves.count == 3)
        #expect(moves[0] > run.shotEnds[0] + 50)
        let report = FeasibilityChecker.check(
            rig: rig, motion: motion, startPose: [-20, 0],
            shooting: ShootingPlan(timing: timing, intervalSeconds: 3))
        #expect(report.intervalMisses.isEmpty)
        #expect(report.shotStartSeconds.count == 4)
    }

    @Test func anIntervalWithoutACameraPacesTheReadyEvents() {
        var player = Player(
            rig: rig, motion: steps([[-20, 0], [-10, 0], [0, 0]]), startPose: [-20, 0],
            shooting: ShootingPlan(intervalSeconds: 2))
        let run = play(&player)
        let ready = run.ticks { if case .ready = $0 { true } else { false } }
        #expect(zip(ready, ready.dropFirst()).map { $1 - $0 } == [200, 200])
    }

    @Test func checkRefusesAnIntervalAStepCannotKeepAndNamesIt() throws {
        // Step 3 is 150° away: 90°/s, 180°/s² → 2.17 s of move alone; 2 s cannot hold.
        let motion = steps([[-80, 0], [-70, 0], [80, 0], [70, 0]])
        let plan = ShootingPlan(timing: timing, intervalSeconds: 2)
        let report = FeasibilityChecker.check(rig: rig, motion: motion, startPose: [-80, 0], shooting: plan)
        let miss = try #require(report.intervalMisses.first)
        #expect(report.intervalMisses.count == 1)
        #expect(miss.step == 2)
        // Shot 0.5 s + the 150° move (whatever profile PoseMove plans) + settle 0.2 s, in ticks.
        let move = PoseMove(from: [-70, 0], to: [80, 0], axes: rig.axes, tickSeconds: rig.tickSeconds)
        #expect(move.durationSeconds > 1.5)
        let needed = 0.5 + Double(move.ticks) * rig.tickSeconds + 0.2
        // Up to two ticks more: `.ready` and the missed-slot report each take a tick of their own.
        #expect(miss.neededSeconds >= needed && miss.neededSeconds <= needed + 0.025, "\(miss.neededSeconds) vs \(needed)")
        #expect(miss.description.hasPrefix("step 3 needs \(rounded(miss.neededSeconds)) s from the previous shot's start"))
        #expect(miss.description.hasSuffix("the interval is 2 s"))
        // At run time the same player reports the missed slot before the late shot.
        var player = Player(rig: rig, motion: motion, startPose: [-80, 0], shooting: plan)
        let run = play(&player)
        let missed = run.events.compactMap { if case .shot(.slotMissed(let step, let slot)) = $0.event { (step, slot, $0.tick) } else { nil } }
        #expect(missed.map(\.0) == [2])
        #expect(missed[0].2 < run.shotStarts[2])
    }

    @Test func backlashApproachesEveryStepFromBelowWithinTheSoftLimits() throws {
        var lashRig = rig
        lashRig.axes[0].backlashDeg = 2
        lashRig.axes[0].softMin = -41
        let poses: [[Double]] = [[20, 0], [-10, 0], [30, 0], [-40, 5], [-39.5, 0]]
        var player = Player(rig: lashRig, motion: steps(poses), startPose: [25, 0], shooting: ShootingPlan(timing: timing))
        let run = play(&player)
        #expect(run.shotStarts.count == poses.count)
        for (k, start) in run.shotStarts.enumerated() {
            #expect(run.frames[start] == poses[k])
            // The last frame that was not at the step's pan is below it: the final approach went up.
            let before = try #require(run.frames[..<start].lastIndex { $0[0] != poses[k][0] })
            let reachedFrom = run.frames[before][0]
            if poses[k][0] > -41 {
                #expect(reachedFrom < poses[k][0], "step \(k + 1) approached from above")
                // …and the approach covered the backlash (or reached the soft limit).
                let low = run.frames[..<start].suffix(from: run.frames[..<start].lastIndex { $0[0] > poses[k][0] } ?? 0).map { $0[0] }.min() ?? 0
                #expect(low <= max(poses[k][0] - 2, -41) + 1e-9)
            }
        }
        #expect(run.frames.allSatisfy { $0[0] >= -41 })
        #expect(LimitExcess(frames: run.frames, rig: lashRig, startPose: [25, 0]).relative <= 1e-6)
        #expect(FeasibilityChecker.check(rig: lashRig, motion: steps(poses), startPose: [25, 0]).feasible)
    }

    @Test func redoShootsTheStepAgainAndGoToMovesBackToAnEarlierStep() {
        let motion = steps([[-20, 0], [0, 0], [20, 0]])
        var player = Player(rig: rig, motion: motion, startPose: [-20, 0], shooting: ShootingPlan(timing: timing))
        var frame = player.positions
        var started: [Int] = []
        var pokedRedo = false
        var pokedBack = false
        for _ in 0..<20_000 where !player.isFinished {
            guard let event = player.tick(into: &frame) else { continue }
            switch event {
            case .shot(.started(let step, _)): started.append(step)
            case .ready(1) where !pokedRedo:
                pokedRedo = true
                player.redo()
                player.advance()
            case .ready(1) where !pokedBack:
                pokedBack = true
                player.goTo(step: 0)
                player.advance()
            case .ready: player.advance()
            default: break
            }
        }
        // 0, 1, redo 1, back to 0 (whose advance goes on to 1 and 2).
        #expect(started == [0, 1, 1, 0, 1, 2])
    }

    @Test func aResumedRunStartsAtItsStep() {
        var player = Player(
            rig: rig, motion: steps([[-20, 0], [0, 0], [20, 0], [30, 0]]), startPose: [0, 0],
            firstStep: 2, shooting: ShootingPlan(timing: timing))
        let run = play(&player)
        let shot = run.events.compactMap { if case .shot(.started(let s, _)) = $0.event { s } else { nil } }
        #expect(shot == [2, 3])
    }

    @Test func aContinuousProgramShootsEveryIntervalOnTheMove() {
        let path = Motion.continuous(
            tracks: [AxisTrack(keys: [Keyframe(time: 0, value: -20), Keyframe(time: 6, value: 20)]), nil],
            durationSeconds: 6)
        var player = Player(rig: rig, motion: path, startPose: [-20, 0], shooting: ShootingPlan(timing: timing, intervalSeconds: 2))
        let run = play(&player)
        // At the path's first frame and every 2 s of path time after it: 0, 2, 4 (6 is the end).
        #expect(zip(run.shotStarts, run.shotStarts.dropFirst()).map { $1 - $0 } == [200, 200])
        #expect(run.shotStarts.count == 3)
        // It does not stop for them: the path cannot brake within the limits and resume.
        #expect(run.frames[run.shotStarts[1]] != run.frames[run.shotStarts[1] + 10])
        // Each ends when its shutter time is up (focus, hold, exposure: 0.65 s), before the
        // next begins: the runner logs every frame on the move with what the camera said.
        let shotTicks = Int((timing.shotSeconds / rig.tickSeconds).rounded())
        #expect(run.shotEnds == run.shotStarts.map { $0 + shotTicks }, "ends \(run.shotEnds), starts \(run.shotStarts)")
        var none = Player(rig: rig, motion: path, startPose: [-20, 0], shooting: ShootingPlan(intervalSeconds: 2))
        #expect(play(&none).shotStarts.isEmpty, "no camera, no shots")
    }

    /// Plays `motion` advancing on every `.ready` and `.readyAtHome`, except that the first
    /// `.ready` of step `homeAfter` asks for `goHome()` instead.
    func playWithHome(_ player: inout Player, homeAfter: Int, stopAtTick: Int? = nil) -> Played {
        var frame = player.positions
        var played = Played()
        var wentHome = false
        var tick = 0
        while !player.isFinished, tick < 100_000 {
            if tick == stopAtTick { player.stop() }
            let event = player.tick(into: &frame)
            played.frames.append(frame)
            if let event {
                played.events.append((tick, event))
                switch event {
                case .ready(let step) where step == homeAfter && !wentHome:
                    wentHome = true
                    player.goHome()
                case .ready, .readyAtHome: player.advance()
                default: break
                }
            }
            tick += 1
        }
        return played
    }

    @Test func homeIsAnExcursionBetweenStepsWithoutAShot() throws {
        var homeRig = rig
        homeRig.axes[0].home = 5
        homeRig.axes[1].home = -3
        let motion = steps([[-40, 0], [0, 10], [40, -10]])
        var player = Player(rig: homeRig, motion: motion, startPose: [0, 0], shooting: ShootingPlan(timing: timing))
        let run = playWithHome(&player, homeAfter: 0)

        let left = try #require(run.ticks { $0 == .homeMoveStarted(after: 0) }.first)
        let atHome = try #require(run.ticks { $0 == .readyAtHome(after: 0) }.first)
        let nextMove = try #require(run.ticks { $0 == .moveStarted(step: 1) }.first)
        #expect(left < atHome && atHome < nextMove)
        // Exactly the home pose, reached by every axis on the same tick, then held.
        #expect(run.frames[atHome] == [5, -3])
        let home: [Double] = [5, -3]
        let arrivals = (0..<2).map { axis in (left..<atHome).last { run.frames[$0][axis] != home[axis] }.map { $0 + 1 } ?? left }
        #expect(arrivals[0] == arrivals[1], "the axes arrived at home on ticks \(arrivals)")
        #expect(run.frames[arrivals[0]...atHome].allSatisfy { $0 == home })
        // Three shots, one per step, none at home; the next step is the one after the step it left.
        let shots = run.events.compactMap { if case .shot(.started(let step, _)) = $0.event { step } else { nil } }
        #expect(shots == [0, 1, 2])
        #expect(run.shotStarts.allSatisfy { $0 < left || $0 > nextMove })
        #expect(LimitExcess(frames: run.frames, rig: homeRig, startPose: [0, 0]).relative <= 1e-6)
    }

    @Test func homeWithBacklashApproachesFromBelowAndAStopOnTheWayParks() throws {
        var lashRig = rig
        lashRig.axes[0].backlashDeg = 2
        lashRig.axes[0].home = 10
        lashRig.axes[0].park = -5
        let motion = steps([[30, 0], [0, 0]])
        var player = Player(rig: lashRig, motion: motion, startPose: [30, 0], shooting: ShootingPlan(timing: timing))
        let run = playWithHome(&player, homeAfter: 0)
        let atHome = try #require(run.ticks { $0 == .readyAtHome(after: 0) }.first)
        #expect(run.frames[atHome][0] == 10)
        // Coming from 30 (above), the last approach to 10 went up from at least 2° below.
        let left = try #require(run.ticks { $0 == .homeMoveStarted(after: 0) }.first)
        let low = run.frames[left...atHome].map { $0[0] }.min() ?? 10
        #expect(low <= 8 + 1e-9)

        // The same excursion stopped half-way: it brakes within the limits, then parks.
        var stopped = Player(rig: lashRig, motion: motion, startPose: [30, 0], shooting: ShootingPlan(timing: timing))
        let stopTick = left + 20
        let braked = playWithHome(&stopped, homeAfter: 0, stopAtTick: stopTick)
        #expect(stopped.isFinished)
        #expect(braked.ticks { $0 == .readyAtHome(after: 0) }.isEmpty)
        #expect(braked.ticks { $0 == .programEnded(stopped: true) }.count == 1)
        #expect(braked.frames.last?[0] == -5)
        #expect(LimitExcess(frames: braked.frames, rig: lashRig, startPose: [30, 0]).relative <= 1e-6)
    }

    @Test func homeAfterTheLastStepThenAdvanceEndsTheProgram() throws {
        let motion = steps([[-20, 0], [20, 0]])
        var player = Player(rig: rig, motion: motion, startPose: [0, 0])
        let run = playWithHome(&player, homeAfter: 1)
        let atHome = try #require(run.ticks { $0 == .readyAtHome(after: 1) }.first)
        let ended = try #require(run.ticks { $0 == .programEnded(stopped: false) }.first)
        #expect(atHome < ended)
        #expect(run.ticks { if case .moveStarted = $0 { true } else { false } }.allSatisfy { $0 < atHome })
    }
}

/// `rig check` and `rig play` run the same player on the same plan: over random still and
/// moving stepped timelapses (equal poses in a row included), every shot the check times
/// is where play shoots it, every interval it does not report as missed is kept to the
/// tick, and a head that does not move keeps any interval its shot and settle allow.
@Suite struct IntervalAgreementTests {
    let base = ShootingPlayerTests()

    @Test(arguments: 0..<4)
    func checkAndPlayAgreeOnEveryInterval(seed: UInt64) {
        var rng = SplitMix64(seed: 0x5EED_0000 + seed)
        let rig = base.rig
        let timing = base.timing
        let dt = rig.tickSeconds
        for trial in 0..<25 {
            let still = trial % 2 == 0
            let count = Int.random(in: 2...10, using: &rng)
            var pan = Double.random(in: -60...60, using: &rng).rounded()
            var poses: [[Double]] = []
            for _ in 0..<count {
                if !still, Bool.random(using: &rng) { pan = Double.random(in: -60...60, using: &rng).rounded() }
                poses.append([pan, 0])
            }
            let settle: Double = ([0, 0.2, 0.5] as [Double]).randomElement(using: &rng) ?? 0
            let interval: Double = ([0.5, 1, 1.5, 2, 5, 10] as [Double]).randomElement(using: &rng) ?? 1
            let motion = base.steps(poses, settle: settle)
            let plan = ShootingPlan(timing: timing, intervalSeconds: interval)
            let report = FeasibilityChecker.check(rig: rig, motion: motion, startPose: poses[0], shooting: plan)
            var player = Player(rig: rig, motion: motion, startPose: poses[0], shooting: plan)
            let run = base.play(&player)
            let context = "poses \(poses), settle \(settle) s, interval \(interval) s"
            // The check's clock counts a tick once it is made; play's index counts from 0.
            let starts = run.shotStarts.map { Double($0 + 1) * dt }
            #expect(starts.count == count, "\(context)")
            for (k, start) in starts.enumerated() {
                #expect(abs((report.shotStartSeconds[k] ?? .nan) - start) < 1e-9, "step \(k + 1): \(context)")
            }
            let missed = Set(report.intervalMisses.map { $0.step })
            for k in starts.indices.dropFirst() {
                let gap = starts[k] - starts[k - 1]
                if missed.contains(k) {
                    #expect(gap > interval + 1e-9, "step \(k + 1) reported missed, played on time: \(context)")
                } else {
                    #expect(abs(gap - interval) < 1e-9, "step \(k + 1): \(gap) s apart, not reported: \(context)")
                }
            }
            // Still: the shot (focus and exposure), its card write and the settle are all
            // that an interval must hold (one tick for the zero-length move's arrival).
            if still, interval >= timing.shotSeconds + timing.afterShotSeconds + settle + dt {
                #expect(missed.isEmpty, "a still head missed its interval: \(report.intervalMisses), \(context)")
            }
        }
    }

    /// A step's own exposure and a bracket's frames are what a self-timed shot holds, so
    /// the check times them: a 1 s step bracketed ×3 (1, ½, 2 s) does not fit 3 s.
    @Test func eachFrameIsHeldForItsOwnExposure() throws {
        let rig = base.rig
        let timing = ShotTiming(focusSeconds: 0, shutterHoldSeconds: 0.1, exposureWindowSeconds: 0.01, afterShotSeconds: 0.1, shotsPerStep: 3)
        let motion = base.steps([[0, 0], [0, 0], [0, 0]], settle: 0.2)
        let frames: [[Double]] = [[0.01, 0.005, 0.02], [1, 0.5, 2], [0.01, 0.005, 0.02]]
        let plan = ShootingPlan(timing: timing, intervalSeconds: 3, frameExposureSeconds: frames)
        let report = FeasibilityChecker.check(rig: rig, motion: motion, startPose: [0, 0], shooting: plan)
        let miss = try #require(report.intervalMisses.first)
        #expect(report.intervalMisses.map(\.step) == [2])
        // 1 + 0.5 + 2 s of exposure and three 0.1 s card writes before the next settle.
        #expect(abs(miss.exposureSeconds - 3.5) < 0.015, "\(miss)")
        // The 0.1 s card writes between the three frames (the last one's overlaps the
        // settle), and the ticks the player's own bookkeeping takes.
        #expect(miss.cameraSeconds >= 0.2 - 1e-9 && miss.cameraSeconds <= 0.3, "\(miss)")
        let parts = miss.exposureSeconds + miss.cameraSeconds + miss.moveSeconds + miss.settleSeconds
        #expect(abs(parts - miss.neededSeconds) <= 0.03, "the split adds up: \(miss)")
        #expect(abs(miss.settleSeconds - 0.2) < 0.015, "\(miss)")
        #expect(miss.description.contains("exposure 3.5 s"), "\(miss)")
        // The program-wide timing alone (every frame 0.1 s) fits: the per-frame plan is what refuses.
        let flat = FeasibilityChecker.check(
            rig: rig, motion: motion, startPose: [0, 0], shooting: ShootingPlan(timing: timing, intervalSeconds: 3))
        #expect(flat.intervalMisses.isEmpty)
    }

    @Test func manyMissesAreSaidOnceWithTheStepsAndTheWorst() {
        var misses: [IntervalMiss] = []
        for step in [1, 2, 3, 4, 7, 9, 10] {
            misses.append(IntervalMiss(step: step, label: "step \(step + 1)", neededSeconds: step == 7 ? 6 : 5.5, intervalSeconds: 5))
        }
        let line = IntervalMiss.summary(misses) ?? ""
        #expect(line.hasPrefix("7 steps cannot keep their interval (steps 2–5, step 8, steps 10–11); the worst: step 8 needs 6 s"), "\(line)")
        #expect(IntervalMiss.summary([]) == nil)
    }
}
