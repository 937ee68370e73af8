import RigCore
import RigSky
import RigTestSupport
import Synchronization
import Testing

@testable import RigRuntime

/// A group's keyframes path on the group's clock (`SharedTimeline`): stalls are caught up
/// within the limits, and the group's pause holds the path and resumes it together.
@Suite struct SharedClockTests {
    struct Frame {
        var t: Double
        var pan: Double
        var light: Double
        var report: SharedTimeline.Report
    }

    /// Plays `motion` from its first keys' pose on the loop with a shared timeline engaged
    /// from the start; `clock` decides when it wakes.
    static func run(
        rig: Rig, motion: Motion, clock: LoopClock, shared: Bool = true, mailbox: SourceMailbox = SourceMailbox(),
        onFrame: @escaping @Sendable (UInt64, SharedTimeline) -> Void = { _, _ in }
    ) -> (result: LoopResult, frames: [Frame], timeline: SharedTimeline) {
        let peaks = PathPeaks(motion: motion, axisCount: rig.axes.count, tickSeconds: rig.tickSeconds)!
        let timeline = SharedTimeline(peaks: peaks)
        timeline.engage()
        guard case .continuous(let tracks, _) = motion else { fatalError("a path") }
        let start = rig.axes.indices.map { tracks[$0]?.keys[0].value ?? rig.axes[$0].home }
        let output = RecordingOutput()
        let frames = Mutex<[Frame]>([])
        output.afterWrite = { _ in
            let last = output.log.withLock { $0.writes.last }
            let pan = last?[0].position(on: rig.axes[0]) ?? .nan
            let light = last?[1].position(on: rig.axes[1]) ?? .nan
            frames.withLock { $0.append(Frame(t: Double(clock.now()) / 1e9, pan: pan, light: light, report: timeline.report)) }
            onFrame(clock.now(), timeline)
        }
        let options = LoopOptions(realtime: false, stallStopSeconds: 0.5, sharedTimeline: shared ? timeline : nil)
        let result = ControlLoop(
            rig: rig, source: Player(rig: rig, motion: motion, startPose: start), output: output, clock: clock, options: options, startPose: start,
            mailbox: mailbox
        ).run()
        return (result, frames.withLock { $0 }, timeline)
    }

    /// A random path for pan and light over `seconds`, smooth keys a few seconds apart.
    static func randomPath(_ g: inout SplitMix64, seconds: Double, gentle: Bool) -> Motion {
        func track(_ range: ClosedRange<Double>, speed: Double) -> AxisTrack {
            var keys = [Keyframe(time: 0, value: Double.random(in: range, using: &g))]
            var t = 0.0
            while t < seconds {
                let dt = min(Double.random(in: 2...4, using: &g), seconds - t)
                guard dt > 0.5 else { break }
                t += dt
                let last = keys[keys.count - 1].value
                let step = Double.random(in: -speed...speed, using: &g) * dt
                keys.append(Keyframe(time: t, value: min(max(last + step, range.lowerBound), range.upperBound)))
            }
            return AxisTrack(keys: keys)
        }
        return .continuous(
            tracks: [track(-70...70, speed: gentle ? 25 : 80), track(0...100, speed: gentle ? 15 : 45)], durationSeconds: seconds)
    }

    /// Pan and light at wall time `t`, between the frames around it.
    static func pose(_ frames: [Frame], at t: Double) -> (pan: Double, light: Double)? {
        guard let k = frames.firstIndex(where: { $0.t >= t }), k > 0 else { return nil }
        let (a, b) = (frames[k - 1], frames[k])
        let u = (t - a.t) / (b.t - a.t)
        return (a.pan + u * (b.pan - a.pan), a.light + u * (b.light - a.light))
    }

    static func withinLimits(_ frames: [Frame], rig: Rig, said: String) {
        for (i, axis) in rig.axes.enumerated() {
            let series = frames.map { (t: $0.t, pan: i == 0 ? $0.pan : $0.light) }
            let v = StallTests.wallVelocities(series).map(abs).max() ?? 0
            #expect(v <= axis.maxVelocity * (1 + 1e-6), "\(said): \(axis.name) at \(v) /s")
            let a = StallTests.wallAccelerations(series).map(abs).max() ?? 0
            #expect(a <= axis.maxAcceleration * (1 + 1e-6), "\(said): \(axis.name) at \(a) /s²")
        }
    }

    /// Random paths with random short stalls (10–30 ms, a busy CPU; sometimes longer): the
    /// loop's limiter never bends a frame and every frame is within the limits in wall
    /// time; where the path leaves room, the lag is gone (under a tick) well before the
    /// path's end and the rig is where the unstalled run is at the same wall time; where
    /// it does not, the loop says so (`atLimit`) and stays within the limits.
    @Test func stallsOnASharedClockAreCaughtUpWithinTheLimits() {
        var caughtUp = 0
        var atLimit = 0
        for seed in 0..<60 {
            var g = SplitMix64(seed: UInt64(seed) &+ 3737)
            let rig = testRig(loopRateHz: [50.0, 100, 200][seed % 3])
            let gentle = seed % 4 != 3
            let seconds = 14.0
            let motion = Self.randomPath(&g, seconds: seconds, gentle: gentle)
            guard FeasibilityChecker.check(rig: rig, motion: motion, startPose: rig.homePose).feasible else { continue }
            let period = rig.tickSeconds
            var stalls: [Int: UInt64] = [:]
            for _ in 0..<Int.random(in: 1...5, using: &g) {
                let long = Int.random(in: 0..<6, using: &g) == 0
                let stall = long ? Double.random(in: 0.03...0.3, using: &g) : Double.random(in: 0.01...0.03, using: &g)
                stalls[Int.random(in: 2...Int(4 / period), using: &g)] = UInt64(max(stall, period * 1.05) * 1e9)
            }
            let said = "seed \(seed), \(rig.loopRateHz) Hz, stalls \(stalls.sorted { $0.key < $1.key }.map { "\($0.key): \(Double($0.value) / 1e6) ms" })"
            let reference = Self.run(rig: rig, motion: motion, clock: StallsClock(stalls: [:]))
            let (result, frames, timeline) = Self.run(rig: rig, motion: motion, clock: StallsClock(stalls: stalls))
            #expect(result.fault == nil, "\(said): \(String(describing: result.fault))")
            #expect(result.stalls == stalls.count, "\(said)")
            Self.withinLimits(frames, rig: rig, said: said)
            // Parked where the unstalled run parks: the whole path played, nothing skipped.
            #expect(abs(result.finalPose[0] - reference.result.finalPose[0]) < 1e-6, "\(said)")
            guard let peaks = timeline.peaks else {
                Issue.record("the timeline has no path")
                continue
            }
            let room = rig.axes.indices.allSatisfy { i in
                (peaks.velocity[i].max() ?? 0) <= 0.5 * rig.axes[i].maxVelocity && (peaks.acceleration[i].max() ?? 0) <= 0.3 * rig.axes[i].maxAcceleration
            }
            // 5 s before the path's end (its last 4 s are played at their own pace).
            let at = 9.0
            guard let late = frames.first(where: { $0.t >= at }), let now = Self.pose(frames, at: late.t), let same = Self.pose(reference.frames, at: late.t)
            else {
                Issue.record("\(said): no frame at \(at) s")
                continue
            }
            if room {
                caughtUp += 1
                #expect(abs(late.report.lagSeconds) < period, "\(said): still \(late.report.lagSeconds) s behind at \(at) s")
                #expect(abs(now.pan - same.pan) < 0.05 && abs(now.light - same.light) < 0.05, "\(said): pan \(now.pan) vs \(same.pan)")
            }
            if frames.contains(where: { $0.report.atLimit }) { atLimit += 1 }
        }
        // The seeds tried both: paths with room, and some that say they cannot catch up.
        #expect(caughtUp >= 20, "only \(caughtUp) paths with room")
        #expect(atLimit >= 1, "no path at its limit")
    }

    /// Alone (no shared clock) a stall is never made up: the timeline stays behind.
    @Test func aloneAStallIsNeverMadeUp() {
        var g = SplitMix64(seed: 11)
        let rig = testRig()
        let motion = Self.randomPath(&g, seconds: 10, gentle: true)
        let reference = Self.run(rig: rig, motion: motion, clock: StallsClock(stalls: [:]), shared: false)
        let (_, frames, _) = Self.run(rig: rig, motion: motion, clock: StallsClock(stalls: [100: 200_000_000]), shared: false)
        let shifted = frames.count - reference.frames.count
        #expect(shifted >= 15, "the stalled run was only \(shifted) frames longer")
    }

    /// The group pauses (the reference's rate to 0 over a ramp) and resumes (back to 1):
    /// the rig brakes within its limits on its path, holds still, and goes on; after the
    /// resume it is where the run without a pause was the pause's length earlier.
    @Test(arguments: [0, 1, 2, 3, 4, 5])
    func aPauseHoldsThePathAndTheResumeGoesOnFromThere(seed: Int) {
        var g = SplitMix64(seed: UInt64(seed) &+ 77)
        let rig = testRig()
        let motion = Self.randomPath(&g, seconds: 16, gentle: true)
        guard FeasibilityChecker.check(rig: rig, motion: motion, startPose: rig.homePose).feasible else { return }
        let peaks = PathPeaks(motion: motion, axisCount: rig.axes.count, tickSeconds: rig.tickSeconds)!
        let ramp = SharedTimeline.rampSeconds(axes: rig.axes, peaks: peaks)
        let pauseAt = Double.random(in: 1...4, using: &g)
        let held = Double.random(in: 1...3, using: &g) + ramp
        // The group's orders as the link gives them: a brake from where the reference is,
        // then a hold where it ends and a ramp-in from one instant.
        let orders = Mutex((paused: false, resumed: false, pausedAt: 0.0, resumedAt: 0.0))
        let order: @Sendable (UInt64, SharedTimeline) -> Void = { now, timeline in
            let t = Double(now) / 1e9
            orders.withLock { o in
                if !o.paused, t >= pauseAt, let x = timeline.referencePath(atNs: now) {
                    o.paused = true
                    o.pausedAt = t
                    timeline.follow([SharedTimeline.Segment(.brake, atNs: now, pathSeconds: x, rampSeconds: ramp)])
                }
                if o.paused, !o.resumed, t >= pauseAt + held, let x = timeline.referencePath(atNs: now) {
                    o.resumed = true
                    o.resumedAt = t
                    timeline.follow([
                        SharedTimeline.Segment(.hold, atNs: now, pathSeconds: x),
                        SharedTimeline.Segment(.rampIn, atNs: now + 10_000_000, pathSeconds: x, rampSeconds: ramp),
                    ])
                }
            }
        }
        let stalls: [Int: UInt64] = seed % 2 == 0 ? [:] : [Int.random(in: 50...600, using: &g): 25_000_000]
        let said = "seed \(seed): pause at \(pauseAt) s for \(held) s, ramp \(ramp) s, stalls \(stalls)"
        let reference = Self.run(rig: rig, motion: motion, clock: StallsClock(stalls: [:]))
        let (result, frames, _) = Self.run(rig: rig, motion: motion, clock: StallsClock(stalls: stalls), onFrame: order)
        #expect(result.fault == nil, "\(said): \(String(describing: result.fault))")
        Self.withinLimits(frames, rig: rig, said: said)
        // Held still once the ramp down is over, until the resume.
        let holding = frames.filter { $0.t > pauseAt + ramp + 0.5 && $0.t < pauseAt + held }
        #expect(!holding.isEmpty)
        let first = holding.first
        #expect(holding.allSatisfy { abs($0.pan - (first?.pan ?? 0)) < 1e-3 && abs($0.light - (first?.light ?? 0)) < 1e-3 }, "\(said)")
        #expect(holding.allSatisfy { $0.report.rate == 0 }, "\(said)")
        // After the resume: the path as it was the hold's length earlier.
        let lost = orders.withLock { $0.resumedAt + 0.01 - $0.pausedAt }
        for t in [pauseAt + held + ramp + 2, pauseAt + held + ramp + 3] where t < 16 - 4 {
            guard let now = Self.pose(frames, at: t), let then = Self.pose(reference.frames, at: t - lost) else { continue }
            #expect(abs(now.pan - then.pan) < 0.05 && abs(now.light - then.light) < 0.05, "\(said): at \(t) s pan \(now.pan), the path's \(then.pan)")
        }
        #expect(abs(result.finalPose[0] - reference.result.finalPose[0]) < 1e-6, "\(said)")
    }

    /// A stop (Ctrl-C, a STOP from the group) while the timeline catches up faster than
    /// its own pace: it brakes on the path back to its pace first, then the program's own
    /// braking and park; every frame within the limits, parked.
    @Test(arguments: [0, 1, 2, 3])
    func aStopWhileCatchingUpBrakesWithinTheLimits(seed: Int) {
        var g = SplitMix64(seed: UInt64(seed) &+ 505)
        let rig = testRig()
        let motion = Self.randomPath(&g, seconds: 12, gentle: true)
        guard FeasibilityChecker.check(rig: rig, motion: motion, startPose: rig.homePose).feasible else { return }
        let mailbox = SourceMailbox()
        let stopped = Mutex<Double?>(nil)
        let (result, frames, _) = Self.run(
            rig: rig, motion: motion, clock: StallsClock(stalls: [150: 400_000_000]), mailbox: mailbox,
            onFrame: { now, timeline in
                guard timeline.report.rate > 1.2 else { return }
                stopped.withLock { if $0 == nil { $0 = Double(now) / 1e9 } }
                mailbox.requestShutdown()
            })
        let said = "seed \(seed)"
        #expect(stopped.withLock { $0 } != nil, "\(said): never caught up faster than its pace")
        #expect(result.fault == nil, "\(said): \(String(describing: result.fault))")
        Self.withinLimits(frames, rig: rig, said: said)
        #expect(abs(result.finalPose[0] - (rig.axes[0].park ?? 0)) < 1e-6, "\(said): parked at \(result.finalPose[0])")
    }
}

/// A path rejoined part-way on the loop (a follower restarted during the group's pause).
extension SharedClockTests {
    /// From its park pose the rig leads in to its path's pose at the group's hold (3.004 s:
    /// between two ticks), rests there on the group's clock (coming up the part of a tick
    /// it rests behind), holds until the group's ramp-in, then plays the rest of its path
    /// from there to its end: every frame within the limits in wall time, the rest exactly
    /// at the path's pose, and the lag gone once it runs.
    @Test func aRejoinedPathLeadsInRestsOnTheGroupsHoldAndRampsInWithinTheLimits() throws {
        let rig = testRig()
        let motion = keyframes(rig)
        guard case .continuous(let tracks, _) = motion else { return }
        let peaks = try #require(PathPeaks(motion: motion, axisCount: rig.axes.count, tickSeconds: rig.tickSeconds))
        let timeline = SharedTimeline(peaks: peaks)
        let hold = 3.004
        let rampAtNs: UInt64 = 6_000_000_000
        // The group's clock: held at `hold`, a ramp-in of 1 s at 6 s.
        timeline.follow([
            SharedTimeline.Segment(.hold, atNs: 0, pathSeconds: hold), SharedTimeline.Segment(.rampIn, atNs: rampAtNs, pathSeconds: hold, rampSeconds: 1),
        ])
        let start = [10.0, 0]
        let clock = StallsClock(stalls: [:])
        let mailbox = SourceMailbox()
        mailbox.post(.rejoin(pathSeconds: hold + rig.tickSeconds, framesShot: nil))
        let output = RecordingOutput()
        let frames = Mutex<[Frame]>([])
        let frameTick = Int(((hold + rig.tickSeconds) / rig.tickSeconds + 1e-6).rounded(.down))
        let options = LoopOptions(realtime: false, stallStopSeconds: 0.5, sharedTimeline: timeline)
        let loop = ControlLoop(
            rig: rig, source: Player(rig: rig, motion: motion, startPose: start, holdsBeforePath: true), output: output, clock: clock, options: options,
            startPose: start, mailbox: mailbox)
        let rejoined = Mutex<Int?>(nil)
        output.afterWrite = { [weak loop] _ in
            let last = output.log.withLock { $0.writes.last }
            let pan = last?[0].position(on: rig.axes[0]) ?? .nan
            let light = last?[1].position(on: rig.axes[1]) ?? .nan
            frames.withLock { $0.append(Frame(t: Double(clock.now()) / 1e9, pan: pan, light: light, report: timeline.report)) }
            // At rest at the rejoined frame's pose (`.readyToRejoin`, as the group link hears
            // it): on the path from there, on the group's clock.
            while let event = loop?.events.pop() {
                guard case .player(.readyToRejoin(let tick), _) = event else { continue }
                rejoined.withLock { $0 = tick }
                timeline.engage(restingAtTick: tick)
                mailbox.post(.advance)
            }
        }
        let result = loop.run()
        #expect(rejoined.withLock { $0 } == frameTick)
        let all = frames.withLock { $0 }
        #expect(result.fault == nil, "\(String(describing: result.fault))")
        Self.withinLimits(all, rig: rig, said: "rejoined at \(hold) s")
        // Engaged well before the ramp-in, and from then to it at rest at the path's pose.
        let engaged = try #require(all.firstIndex { $0.report.engaged })
        #expect(all[engaged].t < 5)
        let held = all[engaged...].prefix { $0.t < Double(rampAtNs) / 1e9 }
        #expect(held.count > 100)
        for f in held.suffix(50) {
            #expect(f.report.atRest, "\(f.t): \(f.report)")
            #expect(abs(f.report.pathSeconds - hold) < 1e-3, "\(f.report)")
            #expect(abs(f.pan - (tracks[0]?.value(at: Double(frameTick) * rig.tickSeconds) ?? .nan)) < 0.01, "\(f.pan)")
        }
        // After the ramp-in the path runs at the group's pace to its end (pan's last key, 20),
        // as close behind the group's clock as any rig ramping in from rest follows it (in
        // its last 4 s a path does not catch up).
        let running = try #require(all.first { $0.t > Double(rampAtNs) / 1e9 + 1.2 })
        #expect(running.report.rate > 0.9 && abs(running.report.lagSeconds) < 0.1, "\(running.report)")
        #expect(all.contains { abs($0.pan - 20) < 1e-3 }, "the path did not end")
        #expect(abs(result.finalPose[0] - 10) < 1e-3, "parked at 10")
    }
}
