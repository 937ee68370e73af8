import CLinux
import RigCore
import RigGamepad
import RigRuntime
import Testing

/// Recorded evdev streams through a real pipe into the jog source, checked frame by frame
/// against the rig's limits.
@Suite("jogging from recorded gamepad input")
struct JogSourceTests {
    @Test func aStickRestingNoisilyInsideTheDeadzoneMovesNothing() throws {
        let h = try JogHarness()
        let noise: [Int32] = [310, -420, 1900, -2600, 800, 2400, -1500, 0, 3000, -3100]
        for (i, n) in noise.enumerated() {
            try h.send { s in
                s.abs(ABS_X, n)
                s.abs(ABS_Y, -n / 2 + Int32(i) * 37)
                s.abs(ABS_RX, n / 3)
                s.report()
            }
            h.run(ticks: 3)
        }
        h.run(ticks: 20)
        #expect(h.frames.allSatisfy { $0 == h.rig.homePose })
        #expect(h.violations.isEmpty)
    }

    @Test func fullDeflectionReachesTheSpeedLimitWithBoundedAcceleration() throws {
        let h = try JogHarness()
        // Coarse speed: right shoulder once (normal → coarse).
        try h.send { $0.tap(BTN_TR) }
        try h.send { s in
            s.abs(ABS_X, 32767)
            s.report()
        }
        h.run(ticks: 120)
        let pan = h.rig.axes[0]
        #expect(abs(h.velocities[0] - pan.maxVelocity) < 1e-6)
        #expect(h.violations.isEmpty)
        #expect(h.monitor.margins[0].peakAcceleration <= pan.maxAcceleration * (1 + 1e-6))
        #expect(h.monitor.margins[0].peakVelocity <= pan.maxVelocity * (1 + 1e-6))
        #expect(h.drainNotices().contains(.speed(level: 2, fraction: 1)))
        // Normal speed is a fraction of it.
        let g = try JogHarness()
        try g.send { s in
            s.abs(ABS_X, -32768)
            s.report()
        }
        g.run(ticks: 120)
        #expect(abs(g.velocities[0] + pan.maxVelocity * 0.4) < 1e-6)
    }

    @Test func approachingASoftLimitSlowsAndNeverCrosses() throws {
        let h = try JogHarness()
        try h.send { $0.tap(BTN_TR) }
        // Tilt up (stick up is negative on the device): soft max 45°.
        try h.send { s in
            s.abs(ABS_Y, -32768)
            s.report()
        }
        h.run(ticks: 600)
        let tilt = h.rig.axes[1]
        #expect(h.violations.isEmpty, "\(h.violations)")
        #expect(h.frames.allSatisfy { $0[1] <= tilt.softMax })
        #expect(abs(h.frame[1] - tilt.softMax) < 0.01)
        #expect(h.velocities[1] == 0)
        let speeds = zip(h.frames.dropFirst(), h.frames).map { ($0[1] - $1[1]) / h.rig.tickSeconds }
        let peak = speeds.max() ?? 0
        #expect(abs(peak - tilt.maxVelocity) < 1e-6)
        // It slowed down gradually (v/a = 0.5 s), never reversing.
        let lastFull = speeds.lastIndex { $0 >= tilt.maxVelocity - 1e-6 } ?? 0
        let braking = speeds[(lastFull + 1)...].prefix { $0 > 0 }
        #expect(braking.count >= 45)
        #expect(zip(braking.dropFirst(), braking).allSatisfy { $0 <= $1 + 1e-9 })
        #expect(speeds.allSatisfy { $0 >= 0 })
    }

    @Test func synDroppedResyncsFromTheDevice() throws {
        let fake = FakeEvdevControl()
        let h = try JogHarness(fake: fake)
        try h.send { s in
            s.abs(ABS_X, 32767)
            s.report()
        }
        h.run(ticks: 5)
        #expect(h.input.snapshot.sticks[0] > 0.99)
        // Events were lost: the stick went back to the centre meanwhile.
        fake.set { $0.absInfo[UInt16(ABS_X)]?.value = 0 }
        try h.send { s in
            s.dropped()
            s.abs(ABS_X, 20000)  // part of a lost packet: must be ignored
            s.report()
        }
        h.run(ticks: 1)
        #expect(h.reader.resyncCount == 1)
        #expect(abs(h.input.snapshot.sticks[0]) < 1e-3)
        h.run(ticks: 200)
        #expect(abs(h.velocities[0]) < 1e-9)
        #expect(h.violations.isEmpty)
        // Later packets apply normally again.
        try h.send { s in
            s.abs(ABS_X, -32768)
            s.report()
        }
        h.run(ticks: 1)
        #expect(h.input.snapshot.sticks[0] < -0.99)
    }

    @Test func unplugMidMoveStopsDeceleratingWithinLimits() throws {
        let h = try JogHarness()
        try h.send { $0.tap(BTN_TR) }
        try h.send { s in
            s.abs(ABS_X, 32767)
            s.abs(ABS_RY, 32767)
            s.report()
        }
        h.run(ticks: 40)
        #expect(h.velocities[0] > 40)
        h.pipe.closeWriteEnd()
        let ticks = h.run(ticks: 200) { $0.source.velocities.allSatisfy { $0 == 0 } }
        #expect(h.readResult == .deviceGone("end of file"))
        #expect(ticks < 200)
        #expect(h.violations.isEmpty, "\(h.violations)")
        #expect(h.drainNotices().contains(.inputLost))
        // Decelerating, not stopping dead: it took at least v/a.
        #expect(Double(ticks) * h.rig.tickSeconds >= 40 / h.rig.axes[0].maxAcceleration)
    }

    @Test func theWatchdogStopsAHeldStickWhenInputFallsSilentAndResumesWithInput() throws {
        let h = try JogHarness()
        h.keepAlive = false
        try h.send { s in
            s.abs(ABS_X, 32767)
            s.report()
        }
        h.run(ticks: 40)
        #expect(h.velocities[0] > 20)
        // 500 ms at 100 Hz: 50 ticks without any sign of life.
        h.run(ticks: 150)
        #expect(h.source.watchdogHolding)
        #expect(h.velocities[0] == 0)
        #expect(h.violations.isEmpty)
        #expect(h.drainNotices().contains(.watchdogStopped))
        try h.send { s in
            s.abs(ABS_X, 32766)
            s.report()
        }
        h.run(ticks: 20)
        #expect(!h.source.watchdogHolding)
        #expect(h.velocities[0] > 0)
    }

    @Test func stopBrakesToRestThenFinishes() throws {
        let h = try JogHarness()
        try h.send { s in
            s.abs(ABS_X, 32767)
            s.report()
        }
        h.run(ticks: 60)
        h.source.stop()
        h.run(ticks: 300) { $0.source.isFinished }
        #expect(h.source.isFinished)
        #expect(h.violations.isEmpty)
    }

    @Test func dpadNudgesOneFineStepAndHomeGoesHome() throws {
        let h = try JogHarness()
        try h.send { s in
            s.abs(ABS_HAT0X, 1)
            s.report()
            s.abs(ABS_HAT0X, 0)
            s.report()
        }
        h.run(ticks: 100)
        #expect(abs(h.frame[0] - 0.5) < 1e-9)
        try h.send { s in
            s.abs(ABS_HAT0Y, -1)
            s.report()
            s.abs(ABS_HAT0Y, 0)
            s.report()
        }
        h.run(ticks: 100)
        #expect(abs(h.frame[1] - 0.5) < 1e-9, "d-pad up moves tilt up")
        try h.send { s in
            s.abs(ABS_RX, 32767)
            s.report()
        }
        h.run(ticks: 100)
        try h.send { s in
            s.abs(ABS_RX, 0)
            s.report()
        }
        h.run(ticks: 100)
        #expect(h.frame[2] > 5)
        try h.send { $0.tap(BTN_WEST) }
        h.run(ticks: 400)
        #expect(h.frame == h.rig.homePose)
        #expect(h.violations.isEmpty)
        #expect(h.drainNotices().contains(.homing))
    }

    @Test func recordsSplitAcrossReadsAreReassembled() throws {
        let h = try JogHarness()
        var stream = EventStream()
        stream.abs(ABS_X, 32767)
        stream.report()
        let bytes = stream.take()
        try h.pipe.write(Array(bytes[..<30]))
        #expect(h.reader.readAvailable() == .idle)
        #expect(h.input.snapshot.sticks[0] < 0.01)
        try h.pipe.write(Array(bytes[30...]))
        #expect(h.reader.readAvailable() == .idle)
        #expect(h.input.snapshot.sticks[0] > 0.99)
    }

    @Test func aProbeOfAVanishedDeviceReportsItGone() throws {
        let fake = FakeEvdevControl()
        let h = try JogHarness(fake: fake)
        #expect(h.reader.probe())
        fake.set { $0.gone = true }
        #expect(!h.reader.probe())
        h.reader.close()
        #expect(!h.input.snapshot.connected)
    }
}
