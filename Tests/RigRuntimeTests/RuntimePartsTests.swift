import Foundation
import RigCore
import Testing

@testable import RigRuntime

@Suite struct RuntimePartsTests {
    @Test func latencyPercentilesAndMissedTicks() {
        var stats = LatencyStats()
        for us in 1...100 { stats.record(latenessNanoseconds: UInt64(us) * 1_000 - 500, periodNanoseconds: 10_000_000) }
        stats.record(latenessNanoseconds: 25_000_000, periodNanoseconds: 10_000_000)
        #expect(stats.count == 101)
        #expect(stats.missedTicks == 1)
        #expect(stats.percentileMicroseconds(0.5) == 51)
        #expect(stats.percentileMicroseconds(0.99) == 100)
        #expect(stats.maxMicroseconds == 25_000)
    }

    @Test func ringKeepsOrderAndCountsDrops() {
        let ring = SPSCRing<Int>(capacity: 4)
        #expect(ring.push(1) && ring.push(2) && ring.push(3))
        #expect(!ring.push(4))
        #expect(ring.droppedCount == 1)
        #expect(ring.pop() == 1)
        #expect(ring.push(5))
        #expect([ring.pop(), ring.pop(), ring.pop(), ring.pop()] == [2, 3, 5, nil])
    }

    @Test func traceRowsCarryPulseAndThePositionItStandsFor() throws {
        let rig = testRig()
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("trace-\(UUID()).csv").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let writer = try TraceWriter(path: path, axes: rig.axes, pwmPeriodMicroseconds: 20_000)
        writer.push(TraceRow(timeSeconds: 0.01, axis: 0, pulseMicroseconds: 2000))
        writer.push(TraceRow(timeSeconds: 0.01, axis: 1, pulseMicroseconds: 5000, wallSeconds: 2.5))
        try writer.close()
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
        #expect(
            lines == [
                "time_s,axis,channel,pulse_us,position_deg,wall_s,camera_deg",
                "0.0100,pan,0,2000.000,45.0000,0.0100,",
                "0.0100,light,3,5000.000,25.0000,2.5000,",
            ])
    }

    @Test func simulatedServoSlewsAtItsSpeed() throws {
        let rig = testRig()
        var config = SimOutputConfig()
        config.servoSpeedDegreesPerSecond = 100
        let sim = SimOutput(config: config, rig: rig)
        try sim.start(channels: rig.axes.map(OutputChannel.init), initial: [rig.axes[0].command(forPosition: 0), .duty(percent: 0)])
        var sent = [Double](repeating: .nan, count: 2)
        try sim.write([rig.axes[0].command(forPosition: 45), .duty(percent: 30)], sent: &sent)
        // 100°/s for 10 ms: the horn moved 1° towards 45°.
        #expect(abs(sim.hornPositions[0] - 1) < 1e-9)
        #expect(sent[0] == 2000)
        #expect(sent[1] == 6000)
        sim.shutdown(safe: [.off, .off])
        sim.shutdown(safe: [.pulse(microseconds: 1), .off])
        #expect(sim.safeState == [.off, .off])
    }

    @Test func liveViewShowsStepProgressAndETA() {
        let rig = testRig()
        let status = LoopStatus(
            positions: [12.345, 40], velocities: [0, 0], progress: PlaybackProgress(elapsedSeconds: 20, step: 3, stepCount: 5, phase: .moving),
            ticks: 2000, latenessMaxMicroseconds: 10)
        let lines = LiveView.lines(status, axes: rig.axes, outputStatus: "ready")
        #expect(lines[0] == "step 3/5  moving  [##########--------------] 40%  ETA 0:30  ·  ready")
        #expect(lines[1] == "pan 12.3°   light 40.0%")
        // Before the first step (a follower waiting for its group's first order): 0 %, not −100 %.
        let before = LoopStatus(
            positions: [0, 0], velocities: [0, 0], progress: PlaybackProgress(elapsedSeconds: 5, step: 0, stepCount: 1, phase: .waiting),
            ticks: 500, latenessMaxMicroseconds: 10)
        #expect(LiveView.lines(before, axes: rig.axes, outputStatus: nil)[0] == "step 0/1  waiting  [------------------------] 0%")
    }
}

/// The log's settle verdicts: a step measured still that moved again says so at its next
/// verdict, whichever it is; a new move forgets it.
@Suite struct SettleVerdictsTests {
    @Test func aStepMeasuredStillThatMovesAgainSaysSoAtItsNextVerdict() {
        var v = SettleVerdicts()
        #expect(v.note(.moveStarted(step: 0)) == nil)
        #expect(v.note(.settled(step: 0, seconds: 4.46, measured: true)) == nil)
        #expect(v.note(.settled(step: 0, seconds: 4.54, measured: true)) == 4.46)
        #expect(v.note(.settled(step: 0, seconds: 5.0, measured: false)) == 4.54)
        // Timed out: nothing measured still to recall.
        #expect(v.note(.settled(step: 0, seconds: 5.1, measured: false)) == nil)
        #expect(v.note(.settled(step: 0, seconds: 5.2, measured: true)) == nil)
        #expect(v.note(.shot(.started(step: 0, bracket: 1))) == nil)
        #expect(v.note(.moveStarted(step: 1)) == nil)
        #expect(v.note(.settled(step: 1, seconds: 0.3, measured: true)) == nil)
        // Another step's verdict is its own.
        #expect(v.note(.settled(step: 2, seconds: 0.4, measured: true)) == nil)
        #expect(v.note(.homeMoveStarted(after: 2)) == nil)
        #expect(v.note(.settled(step: 2, seconds: 0.5, measured: true)) == nil)
    }
}

@Suite struct AdvanceGateTests {
    final class Count: @unchecked Sendable {
        private let lock = NSLock()
        private var n = 0
        func bump() { lock.withLock { n += 1 } }
        var value: Int { lock.withLock { n } }
    }

    @Test func onePressPerReadyStepAndAtMostOneKept() {
        let gate = AdvanceGate()
        let advances = Count()
        gate.start(advance: { advances.bump() })
        // Pressed twice while moving: one press is kept, not two.
        #expect(!gate.press())
        #expect(!gate.press())
        #expect(gate.ready())
        #expect(advances.value == 1)
        // Ready with nothing kept: waits, then the press advances.
        #expect(!gate.ready())
        #expect(gate.press())
        #expect(advances.value == 2)
        gate.stop()
        _ = gate.ready()
        _ = gate.press()
        #expect(advances.value == 2)
    }
}
