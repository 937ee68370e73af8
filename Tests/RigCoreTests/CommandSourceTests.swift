import PropertyBased
import Testing

@testable import RigCore
@testable import RigSky

/// Drives a `CommandSource` tick by tick and watches every frame with `LimitMonitor`.
private struct CommandRun {
    var source: CommandSource
    var monitor: LimitMonitor
    var frame: [Double]
    var frames: [[Double]] = []
    var events: [(tick: Int, event: PlayerEvent)] = []
    var violations: [LimitViolation] = []
    /// Where commands are posted, handed to the source before every tick as the loop does.
    let inbox = SourceMailbox()
    var delivered = SourceMailbox.buffer()

    init(rig: Rig, start: [Double], jogTimeoutSeconds: Double = 0.25) {
        source = CommandSource(rig: rig, startPose: start, jogTimeoutSeconds: jogTimeoutSeconds)
        monitor = LimitMonitor(axes: rig.axes, tickSeconds: rig.tickSeconds, startPose: start)
        frame = start
    }

    /// Runs up to `ticks` ticks, stopping early once `until` holds; returns the ticks run.
    @discardableResult
    mutating func run(ticks: Int, until: ((CommandSource) -> Bool)? = nil) -> Int {
        for n in 1...ticks {
            _ = inbox.deliver(to: &source, buffer: &delivered)
            if let event = source.tick(into: &frame) { events.append((frames.count, event)) }
            frames.append(frame)
            if let v = monitor.observe(frame) { violations.append(v) }
            if let until, until(source) { return n }
        }
        return ticks
    }

    var velocities: [Double] { source.velocities }
}

private let pan = servoAxis("pan", channel: 0, softMin: -90, softMax: 90, maxVelocity: 60, maxAcceleration: 120)
private let tilt = servoAxis("tilt", channel: 1, softMin: -30, softMax: 45, park: -20, maxVelocity: 40, maxAcceleration: 80)
private let rig = simRig([pan, tilt])

@Suite struct CommandSourceTests {
    @Test func goToClampsToTheSoftLimitsReportsItAndArrivesTogether() {
        var r = CommandRun(rig: rig, start: [0, 0])
        r.inbox.post(.goTo(pose: [200, -10]))
        r.run(ticks: 1000) { $0.isAtRest }
        #expect(r.source.clampedAxes == [0])
        #expect(r.source.positions == [90, -10])
        #expect(r.velocities == [0, 0])
        #expect(r.violations.isEmpty, "\(r.violations)")
        // Rest to rest, both axes arriving on the same tick.
        let panDone = r.frames.firstIndex { $0[0] == 90 }
        let tiltDone = r.frames.firstIndex { $0[1] == -10 }
        #expect(panDone != nil && panDone == tiltDone)
        // nil keeps an axis where it is; an in-range target reports nothing clamped.
        let before = r.frames.count
        r.inbox.post(.goTo(pose: [nil, 10]))
        r.run(ticks: 1000) { $0.isAtRest }
        #expect(r.source.positions == [90, 10])
        #expect(r.source.clampedAxes.isEmpty)
        #expect(r.frames[before...].allSatisfy { $0[0] == 90 })
        #expect(r.violations.isEmpty)
    }

    @Test func aShapedAxisGoesToAPoseOnAnSCurveItsShaperDoesNotSmooth() {
        // A command's moves are not shaped: on a shaped axis (trapezoids by default for the
        // player's moves) they keep an S-curve's ramp, taking as long as on the unshaped axis.
        var shaped = pan
        shaped.shaper = ShaperConfig(kind: .zv, frequencyHz: 3, damping: 0.03)
        shaped.maxJerk = shaped.maxAcceleration / Axis.shapedJerkRampSeconds
        func ticks(_ axis: Axis) -> Int {
            var r = CommandRun(rig: simRig([axis]), start: [0])
            r.inbox.post(.goTo(pose: [20]))
            return r.run(ticks: 1000) { $0.isAtRest }
        }
        #expect(ticks(shaped) == ticks(pan))
        var trapezoid = pan
        trapezoid.maxJerk = shaped.maxJerk
        #expect(ticks(trapezoid) < ticks(pan) - 5)
    }

    @Test func malformedCommandsAreRejectedAndMoveNothing() {
        var r = CommandRun(rig: rig, start: [5, 5])
        r.inbox.post(.goTo(pose: [1]))
        r.inbox.post(.goTo(pose: [.nan, 1]))
        r.inbox.post(.jog(velocityFractions: [1, .infinity]))
        r.inbox.post(.setSpeedScale(axis: 2, fraction: 0.5))
        r.inbox.post(.setSpeedScale(axis: 0, fraction: 0))
        r.inbox.post(.setSpeedScale(axis: 0, fraction: 1.5))
        r.run(ticks: 50)
        #expect(r.source.rejectedCommands == 6)
        #expect(r.frames.allSatisfy { $0 == [5, 5] })
        #expect(r.source.speedScales == [1, 1])
    }

    @Test func theJogDeadmanBrakesWithinTheAccelerationLimit() {
        var r = CommandRun(rig: rig, start: [0, 0], jogTimeoutSeconds: 0.25)
        r.inbox.post(.jog(velocityFractions: [1, -0.5]))
        // Keep the jog alive for 1 s: it reaches full speed and stays there.
        for _ in 0..<10 {
            r.run(ticks: 10)
            r.inbox.post(.jog(velocityFractions: [1, -0.5]))
        }
        r.run(ticks: 1)
        #expect(abs(r.velocities[0] - pan.maxVelocity) < 1e-9)
        #expect(abs(r.velocities[1] + tilt.maxVelocity / 2) < 1e-9)
        #expect(r.source.isMoving == [true, true])
        // Silence: it goes on for the timeout (25 ticks at 100 Hz), then brakes.
        let before = r.frames.count
        let ticks = r.run(ticks: 500) { $0.velocities.allSatisfy { $0 == 0 } }
        #expect(r.source.deadmanStops == 1)
        #expect(r.source.mode == .idle)
        #expect(r.source.isMoving == [false, false])
        let speeds = zip(r.frames[before...].dropFirst(), r.frames[before...]).map { ($0[0] - $1[0]) / rig.tickSeconds }
        #expect(speeds.prefix(24).allSatisfy { abs($0 - pan.maxVelocity) < 1e-9 })
        // Braking from 60°/s at 120°/s² takes 0.5 s: it decelerated, it did not stop dead.
        #expect(ticks >= 25 + 50)
        #expect(r.violations.isEmpty, "\(r.violations)")
    }

    @Test func haltMidMoveBrakesToRestShortOfTheTargetAndTheSourceGoesOn() {
        var r = CommandRun(rig: rig, start: [-80, 0])
        r.inbox.post(.goTo(pose: [80, 40]))
        r.run(ticks: 100)
        #expect(r.velocities[0] > 30)
        r.inbox.post(.halt)
        r.run(ticks: 1000) { $0.mode == .idle }
        #expect(r.velocities == [0, 0])
        #expect(r.source.positions[0] < 80 && r.source.positions[1] < 40)
        #expect(r.violations.isEmpty, "\(r.violations)")
        // Still accepting commands.
        r.inbox.post(.goTo(pose: [80, 40]))
        r.run(ticks: 2000) { $0.mode == .idle }
        #expect(r.source.positions == [80, 40])
        #expect(r.violations.isEmpty)
    }

    @Test func aSpeedScaleCapsLaterMovesAndJogs() {
        var r = CommandRun(rig: rig, start: [-80, 0])
        r.inbox.post(.setSpeedScale(axis: 0, fraction: 0.25))
        r.inbox.post(.goTo(pose: [80, nil]))
        r.run(ticks: 3000) { $0.mode == .idle }
        #expect(r.source.positions[0] == 80)
        #expect(r.source.speedScales == [0.25, 1])
        let peak = r.monitor.margins[0].peakVelocity
        #expect(peak <= 15 * (1 + 1e-9))
        #expect(peak > 14.9, "a long move cruises at the cap")
        r.inbox.post(.jog(velocityFractions: [-1, 0]))
        r.run(ticks: 20)
        #expect(abs(r.velocities[0] + 15) < 1e-9)
        #expect(r.violations.isEmpty)
    }

    /// A client's speed scale (DFMoco `pr 1 1`) slows its own moves, not a stop: the park
    /// after a stop uses the rig's limits and ends within seconds.
    @Test func aStopParksAtTheRigsOwnSpeedWhateverTheClientsScale() {
        var r = CommandRun(rig: rig, start: [0, 40])
        r.inbox.post(.setSpeedScale(axis: 1, fraction: 1e-4))
        r.inbox.post(.goTo(pose: [nil, -30]))
        r.run(ticks: 100)
        #expect(r.source.positions[1] < 40 && r.source.positions[1] > 39.9, "the scaled move crawls")
        r.source.stop()
        let ticks = r.run(ticks: 100_000) { $0.isFinished }
        #expect(r.source.isFinished)
        #expect(r.source.positions[1] == -20)
        // Tilt parks at -20: 60° at the axis's own 40°/s takes seconds, not hours.
        #expect(Double(ticks) * rig.tickSeconds < 5, "the park took \(Double(ticks) * rig.tickSeconds) s")
        #expect(r.violations.isEmpty)
    }

    @Test func stopBrakesParksAndFinishesAndIgnoresLaterCommands() {
        var r = CommandRun(rig: rig, start: [0, 0])
        r.inbox.post(.jog(velocityFractions: [1, 1]))
        r.run(ticks: 20)
        r.source.stop()
        r.inbox.post(.goTo(pose: [-90, -30]))
        r.run(ticks: 2000) { $0.isFinished }
        #expect(r.source.isFinished)
        #expect(r.events.map(\.event) == [.programEnded(stopped: true), .finished])
        // Tilt parks at −20; pan has no park position and stays where it stopped.
        #expect(r.source.positions[1] == -20)
        #expect(r.source.positions[0] > 0)
        // The last frame ends a rest-to-rest park: the average speed of its tick is a·dt/2 at most.
        #expect(abs(r.velocities[1]) <= tilt.maxAcceleration * rig.tickSeconds / 2 + 1e-9)
        #expect(r.violations.isEmpty, "\(r.violations)")
    }

    @Test func everyFrameStaysWithinLimitsWhateverTheCommands() async {
        let scenario = Generator(run: { rng in
            var g = SplitMix64(seed: rng.next())
            let rig = Scenario.randomRig(&g)
            let start = rig.axes.map { Double.random(in: $0.softMin...$0.softMax, using: &g) }
            // Per tick: maybe a command (wild targets, fractions, scales), else nothing.
            let script: [MotionCommand?] = (0..<Int.random(in: 100...800, using: &g)).map { _ in
                switch Int.random(in: 0..<40, using: &g) {
                case 0:
                    return .goTo(
                        pose: rig.axes.map { a in
                            Bool.random(using: &g) ? nil : Double.random(in: (a.softMin - 50)...(a.softMax + 50), using: &g)
                        })
                case 1, 2, 3, 4, 5, 6: return .jog(velocityFractions: rig.axes.map { _ in Double.random(in: -1.5...1.5, using: &g) })
                case 7: return .halt
                case 8:
                    return .setSpeedScale(
                        axis: Int.random(in: 0..<rig.axes.count, using: &g),
                        fraction: Double.random(in: 0.05...1, using: &g))
                default: return nil
                }
            }
            return (Scenario(seed: 0, rig: rig, motion: .stepped([]), startPose: start), script)
        })
        await propertyCheck(count: 200, input: scenario) { input in
            let (s, script) = input
            var r = CommandRun(rig: s.rig, start: s.startPose)
            for command in script {
                if let command { r.inbox.post(command) }
                r.run(ticks: 1)
            }
            r.source.stop()
            // Parking keeps the speed scales: at the slowest (10 °/s × 0.05) a 240° park
            // takes 480 s, 240,000 ticks at 500 Hz.
            r.run(ticks: 300_000) { $0.isFinished }
            #expect(r.source.isFinished)
            #expect(r.violations.isEmpty, "\(s): \(r.violations.prefix(3))")
            let excess = LimitExcess(frames: r.frames, rig: s.rig, startPose: s.startPose)
            #expect(excess.relative <= 1e-6, "\(s): \(excess)")
        }
    }
}

/// Records what the mailbox hands it, in order.
private struct Recorder: MotionSource {
    var got: [SourceRequest] = []
    var stopped = 0
    mutating func tick(into positions: inout [Double]) -> PlayerEvent? { nil }
    mutating func advance() { got.append(.advance) }
    mutating func stop() { stopped += 1 }
    mutating func shotDone() { got.append(.shotDone) }
    mutating func redo() { got.append(.redo) }
    mutating func goTo(step: Int) { got.append(.goTo(step: step)) }
    mutating func goHome() { got.append(.goHome) }
    mutating func receive(_ request: SourceRequest) { got.append(request) }
    var isFinished: Bool { false }
    var progress: PlaybackProgress { PlaybackProgress(elapsedSeconds: 0, phase: .idle) }
}

@Suite struct SourceMailboxTests {
    @Test func deliversInOrderAndWhenFullDropsTheOldestJogNeverAHalt() {
        let mailbox = SourceMailbox(capacity: 4)
        var buffer = SourceMailbox.buffer()
        var source = Recorder()
        mailbox.post(.halt)
        mailbox.post(.jog(velocityFractions: [0.1]))
        mailbox.post(.goTo(pose: [1]))
        mailbox.post(.jog(velocityFractions: [0.2]))
        mailbox.post(.jog(velocityFractions: [0.3]))
        _ = mailbox.deliver(to: &source, buffer: &buffer)
        #expect(source.got == [.motion(.halt), .motion(.goTo(pose: [1])), .motion(.jog(velocityFractions: [0.2])), .motion(.jog(velocityFractions: [0.3]))])
        #expect(mailbox.droppedCount == 1)
        // With no jog queued the oldest non-halt goes.
        source.got.removeAll()
        mailbox.post(.halt)
        mailbox.post(.setSpeedScale(axis: 0, fraction: 0.5))
        mailbox.post(.goTo(pose: [2]))
        mailbox.post(.halt)
        mailbox.post(.goTo(pose: [3]))
        _ = mailbox.deliver(to: &source, buffer: &buffer)
        #expect(source.got == [.motion(.halt), .motion(.goTo(pose: [2])), .motion(.halt), .motion(.goTo(pose: [3]))])
        source.got.removeAll()
        _ = mailbox.deliver(to: &source, buffer: &buffer)
        #expect(source.got.isEmpty)
    }

    /// Program requests and the trigger's controls come from people: a full mailbox of
    /// jogs never pushes them out, and they arrive in the order they were posted.
    @Test func programRequestsAndControlsAreNeverDropped() {
        let mailbox = SourceMailbox(capacity: 2)
        var buffer = SourceMailbox.buffer()
        var source = Recorder()
        mailbox.post(SourceRequest.advance)
        mailbox.post(.next)
        for k in 0..<10 { mailbox.post(.jog(velocityFractions: [Double(k)])) }
        mailbox.post(.goTo(step: 3))
        mailbox.post(SourceRequest.redo)
        _ = mailbox.deliver(to: &source, buffer: &buffer)
        #expect(
            source.got == [
                .advance, .program(.next), .motion(.jog(velocityFractions: [8])), .motion(.jog(velocityFractions: [9])), .goTo(step: 3), .redo,
            ])
        #expect(mailbox.droppedCount == 8)
    }

    /// A stop is applied before what was posted with it, once; an abort hands over nothing.
    @Test func stopComesFirstAndAbortDeliversNothing() {
        let mailbox = SourceMailbox()
        var buffer = SourceMailbox.buffer()
        var source = Recorder()
        mailbox.post(.jog(velocityFractions: [1]))
        mailbox.requestShutdown()
        let first = mailbox.deliver(to: &source, buffer: &buffer)
        #expect(first.stop && !first.abort)
        #expect(source.stopped == 1 && source.got == [.motion(.jog(velocityFractions: [1]))])
        // The loop applies a stop once: it says so, and the flag stays set.
        #expect(mailbox.deliver(to: &source, buffer: &buffer, stopFirst: false).stop)
        #expect(source.stopped == 1)
        mailbox.post(.halt)
        mailbox.requestAbort()
        #expect(mailbox.deliver(to: &source, buffer: &buffer, stopFirst: false).abort)
        #expect(source.got == [.motion(.jog(velocityFractions: [1]))])
    }
}
