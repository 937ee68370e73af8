import RigCore
import RigSky
import RigTestSupport
import Synchronization
import Testing

@testable import RigRuntime

/// A clock that jumps to each deadline, except once: at its `stallAt`-th sleep it wakes
/// `stallNanoseconds` late, as a process stopped by SIGTSTP, a paused VM or a slow disk
/// would.
final class StallingClock: LoopClock {
    private let current = Atomic<UInt64>(0)
    private let sleeps = Atomic<Int>(0)
    let stallAt: Int
    let stallNanoseconds: UInt64

    init(stallAt: Int, stallNanoseconds: UInt64) {
        self.stallAt = stallAt
        self.stallNanoseconds = stallNanoseconds
    }

    func now() -> UInt64 { current.load(ordering: .acquiring) }

    func sleep(until deadline: UInt64) {
        let n = sleeps.add(1, ordering: .relaxed).newValue
        let wake = n == stallAt ? deadline + stallNanoseconds : deadline
        if wake > now() { current.store(wake, ordering: .releasing) }
    }
}

/// A clock that jumps to each deadline, but wakes late at some of its sleeps: sleep n
/// (1-based) wakes `stalls[n]` nanoseconds late.
final class StallsClock: LoopClock {
    private let current = Atomic<UInt64>(0)
    private let sleeps = Atomic<Int>(0)
    let stalls: [Int: UInt64]

    init(stalls: [Int: UInt64]) { self.stalls = stalls }

    func now() -> UInt64 { current.load(ordering: .acquiring) }

    func sleep(until deadline: UInt64) {
        let n = sleeps.add(1, ordering: .relaxed).newValue
        let wake = deadline + (stalls[n] ?? 0)
        if wake > now() { current.store(wake, ordering: .releasing) }
    }
}

@Suite struct StallTests {
    /// Which motion source plays: the bare player, or the program host as `rig play` and
    /// `rig serve` run it.
    enum Host: Sendable, CaseIterable { case player, programHost }

    /// Every frame the output received, with the clock's time when it did.
    static func run(
        stallAt: Int, stallSeconds: Double, stallStopSeconds: Double = 0.5, host: Host = .player
    ) -> (result: LoopResult, frames: [(t: Double, pan: Double)]) {
        let rig = testRig()
        let clock = StallingClock(stallAt: stallAt, stallNanoseconds: UInt64(stallSeconds * 1e9))
        let output = RecordingOutput()
        let frames = Mutex<[(t: Double, pan: Double)]>([])
        output.afterWrite = { _ in
            let pan = output.log.withLock { $0.writes.last?[0].position(on: rig.axes[0]) } ?? .nan
            frames.withLock { $0.append((Double(clock.now()) / 1e9, pan)) }
        }
        let options = LoopOptions(realtime: false, stallStopSeconds: stallStopSeconds)
        let result: LoopResult
        switch host {
        case .player:
            result = ControlLoop(
                rig: rig, source: Player(rig: rig, motion: keyframes(rig), startPose: rig.homePose), output: output, clock: clock,
                options: options, startPose: rig.homePose
            ).run()
        case .programHost:
            let program = HostedProgram(name: "keys", motion: keyframes(rig), trigger: .auto)
            result = ControlLoop(
                rig: rig, source: ProgramHost(rig: rig, startPose: rig.homePose, program: program, endsWithProgram: true), output: output,
                clock: clock, options: options, startPose: rig.homePose
            ).run()
        }
        return (result, frames.withLock { $0 })
    }

    /// What the output received, in wall time: never over the axis's speed, and (apart
    /// from the one step a short stall makes, back to the speed the rig had) never
    /// changing speed faster than its acceleration.
    static func wallVelocities(_ frames: [(t: Double, pan: Double)]) -> [Double] {
        zip(frames, frames.dropFirst()).map { ($1.pan - $0.pan) / ($1.t - $0.t) }
    }

    /// The rig's acceleration in wall time, as the servo sees it: the change between the
    /// velocities of neighbouring frame intervals over the time between their middles.
    /// The interval of a stall itself may only slow the rig (the output got no frame: that
    /// is the stall, not something the loop did); every other change counts.
    static func wallAccelerations(_ frames: [(t: Double, pan: Double)]) -> [Double] {
        guard frames.count >= 3 else { return [] }
        var out: [Double] = []
        for k in 0..<(frames.count - 2) {
            let (a, b, c) = (frames[k], frames[k + 1], frames[k + 2])
            let v0 = (b.pan - a.pan) / (b.t - a.t)
            let v1 = (c.pan - b.pan) / (c.t - b.t)
            let intoStall = (c.t - b.t) > (b.t - a.t) * 1.5 && abs(v1) <= abs(v0) && v0 * v1 >= 0
            if intoStall { continue }
            out.append((v1 - v0) / ((c.t - a.t) / 2))
        }
        return out
    }

    /// A stall of any length under the stop threshold, mid-move (tick 150: pan moves at
    /// tens of °/s), on the bare player and on the program host: the rig comes back to
    /// speed within its acceleration, in wall time, and plays the whole program.
    @Test(arguments: Host.allCases, [0.01, 0.02, 0.05, 0.15, 0.3, 0.45])
    func aShortStallComesBackToSpeedWithinTheAcceleration(host: Host, stallSeconds: Double) {
        let reference = Self.run(stallAt: .max, stallSeconds: 0, host: host)
        let (result, frames) = Self.run(stallAt: 150, stallSeconds: stallSeconds, host: host)
        #expect(result.fault == nil)
        #expect(result.stalls == 1 && result.missedTicks == Int((stallSeconds / 0.01).rounded()))
        // The whole program, parked where the reference parks: nothing skipped.
        #expect(abs(result.finalPose[0] - reference.result.finalPose[0]) < 1e-9)
        let rig = testRig()
        let velocities = Self.wallVelocities(frames)
        #expect(velocities.allSatisfy { abs($0) <= rig.axes[0].maxVelocity * (1 + 1e-6) }, "max \(velocities.map(abs).max() ?? 0) °/s")
        let accelerations = Self.wallAccelerations(frames)
        let worst = accelerations.map(abs).max() ?? 0
        #expect(worst <= rig.axes[0].maxAcceleration * (1 + 1e-6), "worst wall acceleration \(worst) °/s² (limit 180)")
        // No backlog: never two frames closer than a period.
        let gaps = zip(frames, frames.dropFirst()).map { $1.t - $0.t }
        #expect(gaps.filter { $0 < 0.01 - 1e-9 }.isEmpty)
        #expect(gaps.filter { $0 > 0.011 }.count == 1)
        // Speeding up again adds no jerk beyond the axis's (or the program's own, where its
        // keyframes ask more): from the third frame after the stall on, in wall time.
        let allowed = max(rig.axes[0].maxJerk, Self.worstJerk(reference.frames, from: 0)) * (1 + 1e-6) + 1
        let resumed = (gaps.firstIndex { $0 > 0.011 } ?? 0) + 3
        let jerk = Self.worstJerk(frames, from: resumed)
        #expect(jerk <= allowed, "worst jerk after the stall \(jerk) °/s³ (allowed \(allowed))")
    }

    /// The largest jerk (third difference of the pose over frames a period apart) from
    /// frame `start` on, skipping any stretch whose frames are not a period apart.
    static func worstJerk(_ frames: [(t: Double, pan: Double)], from start: Int) -> Double {
        guard frames.count >= start + 4 else { return 0 }
        var worst = 0.0
        for k in max(start, 0)..<(frames.count - 3) {
            let f = frames[k...(k + 3)].map { $0 }
            let dts = zip(f, f.dropFirst()).map { $1.t - $0.t }
            guard dts.allSatisfy({ abs($0 - 0.01) < 1e-6 }) else { continue }
            let third = f[3].pan - 3 * f[2].pan + 3 * f[1].pan - f[0].pan
            worst = max(worst, abs(third) / (0.01 * 0.01 * 0.01))
        }
        return worst
    }

    @Test func aLongStallWhileMovingStopsFromRestWithinTheLimits() {
        let (result, frames) = Self.run(stallAt: 150, stallSeconds: 2)
        guard case .stalled(let seconds, _) = result.fault else {
            Issue.record("fault \(String(describing: result.fault)), not a stall")
            return
        }
        #expect(abs(seconds - 2) < 0.011)
        let rig = testRig()
        let a = rig.axes[0].maxAcceleration
        let velocities = Self.wallVelocities(frames)
        let stallIndex = frames.indices.dropFirst().first { frames[$0].t - frames[$0 - 1].t > 1 } ?? 0
        #expect(stallIndex > 0)
        // After the stall the rig starts from rest: the first frame moves no faster than one
        // tick of acceleration, and every later change of velocity is within the limit.
        let after = Array(velocities[stallIndex...])
        #expect(abs(after.first ?? .nan) <= a * 0.01 * (1 + 1e-6), "first wall velocity after the stall: \(after.first ?? .nan)")
        for (v0, v1) in zip(after, after.dropFirst()) { #expect(abs(v1 - v0) <= a * 0.01 * (1 + 1e-6) + 1e-9) }
        #expect(velocities.allSatisfy { abs($0) <= 90 * (1 + 1e-6) })
        // It parked (pan's park is 10°) and was shut down once.
        #expect(abs(result.finalPose[0] - 10) < 1e-9)
    }

    @Test func aLongStallAtRestGoesOn() {
        // The program's first tick: the rig is still at home.
        let (result, _) = Self.run(stallAt: 1, stallSeconds: 2)
        #expect(result.fault == nil)
        #expect(result.stalls == 1)
        #expect(abs(result.finalPose[0] - 10) < 1e-9)
    }

    /// Over random stepped programs, loop rates, jerks and stalls (several, anywhere, each
    /// shorter than the stop threshold): the loop never has to bend a frame (a bend stops
    /// `rig play`), plays the whole program, and the rig's wall-time acceleration stays
    /// within the axis's. Found: a stall near a short move's start, then the resume ramp's
    /// rise to full rate in one tick while the move sped up at its limit, bent it.
    @Test func stallsAnywhereNeverMakeTheLimiterBendAProgram() {
        for seed in 0..<300 {
            var g = SplitMix64(seed: UInt64(seed) &+ 99)
            let rate = [50.0, 100, 200][seed % 3]
            var rig = testRig(loopRateHz: rate)
            if seed % 2 == 0 { rig.axes[0].maxJerk = Double.random(in: 500...20_000, using: &g) }
            let steps = (0..<5).map { i in
                Step(pose: [Double.random(in: -70...70, using: &g), Double.random(in: 0...100, using: &g)], settleSeconds: 0.05, label: "\(i)")
            }
            let period = 1 / rate
            var stalls: [Int: UInt64] = [:]
            for _ in 0..<Int.random(in: 1...6, using: &g) {
                stalls[Int.random(in: 2...Int(6 / period), using: &g)] = UInt64(Double.random(in: period * 1.05...0.45, using: &g) * 1e9)
            }
            let clock = StallsClock(stalls: stalls)
            let pan = rig.axes[0]
            let output = RecordingOutput()
            let frames = Mutex<[(t: Double, pan: Double)]>([])
            output.afterWrite = { _ in
                let position = output.log.withLock { $0.writes.last?[0].position(on: pan) } ?? .nan
                frames.withLock { $0.append((Double(clock.now()) / 1e9, position)) }
            }
            let program = HostedProgram(name: "steps", motion: .stepped(steps), trigger: .auto)
            let result = ControlLoop(
                rig: rig, source: ProgramHost(rig: rig, startPose: rig.homePose, program: program, endsWithProgram: true), output: output,
                clock: clock, options: LoopOptions(realtime: false, stallStopSeconds: 0.5), startPose: rig.homePose
            ).run()
            let said = "seed \(seed), \(rate) Hz, stalls \(stalls.sorted { $0.key < $1.key }.map { "\($0.key): \(Double($0.value) / 1e6) ms" })"
            #expect(result.fault == nil, "\(said): \(String(describing: result.fault))")
            #expect(abs(result.finalPose[0] - (rig.axes[0].park ?? 0)) < 1e-6, "\(said): parked at \(result.finalPose[0])")
            let worst = Self.wallAccelerations(frames.withLock { $0 }).map(abs).max() ?? 0
            #expect(worst <= rig.axes[0].maxAcceleration * (1 + 1e-6), "\(said): worst wall acceleration \(worst) °/s²")
        }
    }
}
