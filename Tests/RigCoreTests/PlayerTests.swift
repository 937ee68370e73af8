import Testing

@testable import RigCore

@Suite struct PlayerTests {
    let rig = simRig([
        servoAxis("pan", channel: 0, softMin: -90, softMax: 90, park: -10),
        servoAxis("tilt", channel: 1, softMin: -45, softMax: 45, park: 20, maxVelocity: 60, maxAcceleration: 120),
    ])

    /// A feasible sweep: pan −60 → 60 in 4 s (peak 1.5·120/4 = 45°/s, peak accel 6·120/16 = 45°/s²),
    /// tilt 0 → 30 → 0 over 4 s.
    var sweep: Motion {
        .continuous(
            tracks: [
                AxisTrack(keys: [Keyframe(time: 0, value: -60), Keyframe(time: 4, value: 60)]),
                AxisTrack(keys: [Keyframe(time: 0, value: 0), Keyframe(time: 2, value: 30), Keyframe(time: 4, value: 0)]),
            ],
            durationSeconds: 4)
    }

    @Test func twoRunsOfTheSameProgramGiveIdenticalFrames() {
        for seed: UInt64 in [1, 2, 3, 42, 1234] {
            let s = Scenario.make(seed: seed, stepped: nil)
            let a = drive(rig: s.rig, motion: s.motion, startPose: s.startPose)
            let b = drive(rig: s.rig, motion: s.motion, startPose: s.startPose)
            #expect(a.frames == b.frames)
            #expect(a.events.map(\.event) == b.events.map(\.event))
            #expect(a.events.map(\.tick) == b.events.map(\.tick))
        }
    }

    @Test func leadInFromAnOffPathStartPose() throws {
        // Start pan at 30, the path starts at −60: a rest-to-rest S-curve of 90° at 90°/s,
        // 180°/s² and 1800°/s³. Reaching 90°/s takes 90/180 + 180/1800 = 0.6 s and 27°,
        // braking the same, leaving 36° to cruise in 0.4 s: 1.6 s = 160 ticks at 100 Hz.
        // Tilt starts at 10, 10° away: shorter.
        let run = drive(rig: rig, motion: sweep, startPose: [30, 10])
        let excess = LimitExcess(frames: run.frames, rig: rig, startPose: [30, 10])
        #expect(excess.relative <= 1e-6, "\(excess)")
        // The planner rounds the duration up to whole ticks with a hair of slack, so a move
        // that is an exact number of ticks long may take one more.
        let arrival = try #require(run.frames.firstIndex { $0 == [-60, 0] })
        #expect((159...160).contains(arrival), "the lead-in arrives at the path's first pose after 160 ticks")
        // The path then plays from t = 0.01 s: pan passes its midpoint 0 at t = 2 s, 200 ticks on.
        #expect(abs(run.frames[arrival + 200][0]) < 1e-9)
        // The lead-in moves monotonically towards the target.
        for k in 1...arrival { #expect(run.frames[k][0] <= run.frames[k - 1][0]) }
    }

    /// A group's keyframes path: after the lead-in the rig holds at the first key (one
    /// `.readyToStart`) for as long as nobody says go, then plays the path from t = 0.
    @Test func aPathThatHoldsBeforeItStartsWaitsForAdvanceAtTheFirstKey() throws {
        var player = Player(rig: rig, motion: sweep, startPose: [30, 10], holdsBeforePath: true)
        var pose = [30.0, 10.0]
        var events: [(tick: Int, event: PlayerEvent)] = []
        for tick in 0..<700 {
            if let e = player.tick(into: &pose) { events.append((tick, e)) }
        }
        let ready = try #require(events.first { $0.event == .readyToStart })
        #expect(events.count == 1, "nothing after the lead-in but the hold: \(events)")
        #expect(pose == [-60, 0], "held at the first key")
        #expect(player.phase == .waitingToStart && player.phase.isWaiting)
        #expect(ready.tick < 200)
        player.advance()
        var frames: [[Double]] = []
        var ended = false
        for _ in 0..<1000 where !ended {
            if player.tick(into: &pose) == .programEnded(stopped: false) { ended = true }
            frames.append(pose)
        }
        #expect(ended)
        // The path from its start: pan passes its midpoint 0 at t = 2 s, 200 ticks after go.
        #expect(abs(frames[199][0]) < 1e-9, "\(frames[199])")
        let excess = LimitExcess(frames: [[-60, 0]] + frames, rig: rig, startPose: [-60, 0])
        #expect(excess.relative <= 1e-6, "\(excess)")
    }

    @Test func endsWithProgramEndedThenParksAndFinishes() throws {
        let run = drive(rig: rig, motion: sweep, startPose: [-60, 0])
        let events = run.events.map(\.event)
        #expect(events.first == .programEnded(stopped: false))
        #expect(events.last == .finished)
        #expect(run.frames.last == [-10, 20], "parked at the park positions")
        let excess = LimitExcess(frames: run.frames, rig: rig, startPose: [-60, 0])
        #expect(excess.relative <= 1e-6, "\(excess)")
    }

    @Test func withNothingToParkTheLastEventIsStillFinished() {
        let bare = simRig([servoAxis("pan", channel: 0)])
        let motion: Motion = .continuous(tracks: [AxisTrack(keys: [Keyframe(time: 0, value: 0), Keyframe(time: 2, value: 20)])], durationSeconds: 2)
        for stopTick in [nil, 100] as [Int?] {
            let run = drive(rig: bare, motion: motion, startPose: [0]) { tick, player in if tick == stopTick { player.stop() } }
            let events = run.events.map(\.event)
            #expect(events.last == .finished)
            #expect(events.filter { $0 == .finished }.count == 1)
            #expect(events.contains(.programEnded(stopped: stopTick != nil)))
        }
    }

    @Test(arguments: [50, 150, 230, 399])
    func stopBrakesWithinLimitsAndParks(stopTick: Int) throws {
        var stoppedAt: [Double] = []
        let run = drive(rig: rig, motion: sweep, startPose: [-60, 0]) { tick, player in
            if tick == stopTick {
                player.stop()
                stoppedAt = player.positions
            }
        }
        let excess = LimitExcess(frames: run.frames, rig: rig, startPose: [-60, 0])
        #expect(excess.relative <= 1e-6, "\(excess)")
        let ended = try #require(run.events.first { $0.event == .programEnded(stopped: true) })
        #expect(run.events.last?.event == .finished)
        #expect(!run.events.contains { $0.event == .programEnded(stopped: false) })
        // Braking from v at a stops within v²/(2a) plus a tick of slack; pan moves at most 45°/s
        // (braking distance ≤ 45²/360 = 5.6°).
        let brakeEnd = run.frames[ended.tick]
        #expect(abs(brakeEnd[0] - stoppedAt[0]) <= 45 * 45 / 360 + 0.5)
        // At rest when braking ends, then parked.
        #expect(run.frames[ended.tick] == run.frames[ended.tick - 1])
        #expect(run.frames.last == [-10, 20])
    }

    @Test func stopWhileWaitingParksAtOnce() {
        let steps: Motion = .stepped([Step(pose: [10, 10], settleSeconds: 0, label: "a"), Step(pose: [20, 20], settleSeconds: 0, label: "b")])
        var sawReady = false
        let run = drive(rig: rig, motion: steps, startPose: [0, 0], advanceOnReady: false) { _, player in
            if sawReady { player.stop() }
            if case .waiting = player.phase { sawReady = true }
        }
        #expect(run.events.map(\.event).contains(.programEnded(stopped: true)))
        #expect(!run.events.map(\.event).contains(.moveStarted(step: 1)))
        #expect(run.frames.last == [-10, 20])
    }

    @Test func steppedProgramReportsReadyOncePerStepAndWaitsForAdvance() throws {
        let poses: [[Double]] = [[10, 0], [-30, 20], [-30, 20], [45, -10]]
        let steps = poses.enumerated().map { Step(pose: $1, settleSeconds: 0.25, label: "step \($0 + 1)") }
        var player = Player(rig: rig, motion: .stepped(steps), startPose: [0, 0])
        var frame = [0.0, 0.0]
        var readies: [Int] = []
        for step in 0..<steps.count {
            // Run until ready.
            var arrived: Int?
            var ticks = 0
            while true {
                let event = player.tick(into: &frame)
                ticks += 1
                if arrived == nil, frame == poses[step] { arrived = ticks }
                if case .ready(let s) = event {
                    readies.append(s)
                    break
                }
                #expect(ticks < 10_000)
                if ticks >= 10_000 { return }
            }
            #expect(frame == poses[step], "ready only once at the step's pose")
            // Settle: 0.25 s = 25 ticks at 100 Hz after arriving. A repeated pose "arrives" on the
            // tick its (empty) move starts and begins settling on the next one.
            let settleTicks = ticks - (arrived ?? 0)
            #expect(settleTicks == 25 || (step == 2 && settleTicks == 26), "step \(step): settled \(settleTicks) ticks")
            // Without advance() the rig stays put and says nothing more.
            for _ in 0..<500 {
                #expect(player.tick(into: &frame) == nil)
                #expect(frame == poses[step])
            }
            player.advance()
        }
        #expect(readies == [0, 1, 2, 3])
        #expect(player.tick(into: &frame) == .programEnded(stopped: false))
    }

    @Test func advanceDuringAMoveTakesEffectOnArrival() {
        let steps: Motion = .stepped([Step(pose: [40, 0], settleSeconds: 0, label: "a"), Step(pose: [0, 0], settleSeconds: 0, label: "b")])
        var player = Player(rig: rig, motion: steps, startPose: [0, 0])
        var frame = [0.0, 0.0]
        player.advance()
        var events: [PlayerEvent] = []
        for _ in 0..<1000 { if let e = player.tick(into: &frame) { events.append(e) } }
        #expect(events.prefix(3) == [.ready(step: 0), .moveStarted(step: 1), .ready(step: 1)])
    }

    @Test func emptyStepListIsFinishedAtOnce() {
        let player = Player(rig: rig, motion: .stepped([]), startPose: [0, 0])
        #expect(player.isFinished)
    }
}
