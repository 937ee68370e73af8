import Testing

@testable import RigCore

/// `.follow(tracks:)`: timed paths played through the source's limiter (go-motion).
@Suite struct CommandSourceFollowTests {
    let rig = simRig([
        servoAxis("pan", channel: 0, maxVelocity: 60, maxAcceleration: 120),
        servoAxis("tilt", channel: 1, softMin: -30, softMax: 45, maxVelocity: 40, maxAcceleration: 80),
    ])
    /// 0 → 10° in 1 s at a constant 20°/s², then on to 20° at rest by 2 s.
    let track = AxisTrack(
        keys: [Keyframe(time: 0, value: 0), Keyframe(time: 1, value: 10), Keyframe(time: 2, value: 20)],
        tangents: [0, 20, 0])

    /// Ticks `source` `count` times; returns the frames and checks each against the limits.
    func run(_ source: inout CommandSource, ticks count: Int, monitor: inout LimitMonitor, inbox: SourceMailbox) -> [[Double]] {
        var frame = source.positions
        var frames: [[Double]] = []
        var delivered = SourceMailbox.buffer()
        for _ in 0..<count {
            _ = inbox.deliver(to: &source, buffer: &delivered)
            _ = source.tick(into: &frame)
            frames.append(frame)
            if let v = monitor.observe(frame) { Issue.record("limit broken: \(v)") }
        }
        return frames
    }

    @Test func playsTheTracksFromTheTickThatAppliesThem() {
        let inbox = SourceMailbox()
        var source = CommandSource(rig: rig, startPose: [0, 5])
        var monitor = LimitMonitor(axes: rig.axes, tickSeconds: rig.tickSeconds, startPose: [0, 5])
        _ = run(&source, ticks: 3, monitor: &monitor, inbox: inbox)
        inbox.post(.follow(tracks: [track, nil]))
        let frames = run(&source, ticks: 250, monitor: &monitor, inbox: inbox)
        // The frame of the tick that applies the command is the track at one tick.
        for k in [0, 49, 99, 149, 199] {
            #expect(abs(frames[k][0] - track.value(at: Double(k + 1) * 0.01)) < 1e-9, "tick \(k)")
            #expect(frames[k][1] == 5)
        }
        #expect(abs(frames[99][0] - 10) < 1e-9)
        #expect(source.mode == .idle)
        #expect(source.positions == [20, 5])
        #expect(source.isMoving == [false, false])
    }

    @Test func reportsTheTrackedAxesMovingAndHaltBrakesOutOfIt() {
        let inbox = SourceMailbox()
        var source = CommandSource(rig: rig, startPose: [0, 0])
        var monitor = LimitMonitor(axes: rig.axes, tickSeconds: rig.tickSeconds, startPose: [0, 0])
        inbox.post(.follow(tracks: [track, nil]))
        _ = run(&source, ticks: 80, monitor: &monitor, inbox: inbox)
        #expect(source.mode == .following)
        #expect(source.isMoving == [true, false])
        inbox.post(.halt)
        _ = run(&source, ticks: 200, monitor: &monitor, inbox: inbox)
        #expect(source.mode == .idle)
        #expect(source.positions[0] < 10)
    }

    @Test func theWrongNumberOfTracksIsRejected() {
        let inbox = SourceMailbox()
        var source = CommandSource(rig: rig, startPose: [0, 0])
        var monitor = LimitMonitor(axes: rig.axes, tickSeconds: rig.tickSeconds, startPose: [0, 0])
        inbox.post(.follow(tracks: [track]))
        _ = run(&source, ticks: 10, monitor: &monitor, inbox: inbox)
        #expect(source.rejectedCommands == 1)
        #expect(source.positions == [0, 0])
    }
}
