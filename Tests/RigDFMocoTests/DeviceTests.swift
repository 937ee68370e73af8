import RigCore
import RigDFMoco
import Testing

/// The protocol state machine on a rig it only observes: motor 1 is tilt (axis 1), motor 2
/// pan (axis 0), 100 steps per degree.
@Suite struct DeviceTests {
    let rig: Rig
    var device: DFMocoDevice

    init() throws {
        rig = try testRig()
        device = DFMocoDevice(rig: rig, version: "0.1.0")
    }

    /// At rest at `pan`, `tilt`, after `ticks` loop ticks.
    func still(pan: Double = 0, tilt: Double = 0, ticks: Int = 10) -> DFMocoDevice.Observation {
        .init(positions: [pan, tilt, 0], velocities: [0, 0, 0], ticks: ticks)
    }

    func moving(pan: Double = 0, tilt: Double = 0, panVelocity: Double = 0, tiltVelocity: Double = 0, ticks: Int = 10) -> DFMocoDevice.Observation {
        .init(positions: [pan, tilt, 0], velocities: [panVelocity, tiltVelocity, 0], ticks: ticks)
    }

    @Test mutating func handshakeNamesVersionTwoAndTheMotorCount() {
        #expect(device.handle(.hello, still()).replies == ["hi 2 2 0.1.0"])
    }

    @Test mutating func aMoveIsReportedMovingUntilTheLoopShowsItStill() {
        let r = device.handle(.moveMotor(motor: 1, position: 1000), still(ticks: 10))
        #expect(r.replies == ["mm 1 1000"])
        #expect(r.commands == [.goTo(pose: [nil, 10, nil])])
        // The loop may not have picked the command up yet: still "moving".
        #expect(device.handle(.movingStatus, still(ticks: 11)).replies == ["ms 10"])
        #expect(device.handle(.movingStatus, moving(tilt: 4, tiltVelocity: 30, ticks: 40)).replies == ["ms 10"])
        #expect(device.handle(.motorPosition(motor: 1), moving(tilt: 4, tiltVelocity: 30, ticks: 40)).replies == ["mp 1 400"])
        #expect(device.handle(.movingStatus, still(tilt: 10, ticks: 80)).replies == ["ms 00"])
    }

    /// A rig with a measured settle: stopped, but the head not yet measured still after the
    /// move (the loop's `settling`): `ms` says the motor that moved still moves, so
    /// Dragonframe waits to shoot; the positions are where the motors are. The next settle,
    /// after the other motor's move, flags only that one; a settle no move of a motor
    /// explains (the rig jogged from elsewhere) flags every motor.
    @Test mutating func whileTheHeadSettlesTheMotorThatMovedIsReportedMoving() {
        #expect(device.handle(.movingStatus, still(ticks: 5)).replies == ["ms 00"])
        _ = device.handle(.moveMotor(motor: 1, position: 1000), still(ticks: 10))
        var settling = still(tilt: 10, ticks: 80)
        settling.settling = true
        #expect(device.handle(.movingStatus, settling).replies == ["ms 10"])
        #expect(device.handle(.motorPosition(motor: 1), settling).replies == ["mp 1 1000"])
        #expect(device.handle(.movingStatus, still(tilt: 10, ticks: 120)).replies == ["ms 00"])
        _ = device.handle(.moveMotor(motor: 2, position: 500), still(tilt: 10, ticks: 130))
        var settlingPan = still(pan: 5, tilt: 10, ticks: 200)
        settlingPan.settling = true
        #expect(device.handle(.movingStatus, settlingPan).replies == ["ms 01"])
        #expect(device.handle(.movingStatus, still(pan: 5, tilt: 10, ticks: 240)).replies == ["ms 00"])
        var jogged = still(pan: 7, tilt: 10, ticks: 300)
        jogged.settling = true
        #expect(device.handle(.movingStatus, jogged).replies == ["ms 11"])
    }

    @Test mutating func aMoveToWhereTheMotorIsAnswersWithItsPosition() {
        let r = device.handle(.moveMotor(motor: 2, position: -250), still(pan: -2.5))
        #expect(r.replies == ["mp 2 -250"])
        #expect(r.commands.isEmpty)
    }

    @Test mutating func aTargetBeyondTheSoftLimitIsClampedAndLogged() {
        let r = device.handle(.moveMotor(motor: 1, position: 9000), still())
        #expect(r.replies == ["mm 1 9000"])
        #expect(r.commands == [.goTo(pose: [nil, 45, nil])])
        #expect(r.log == ["motor 1 (tilt): 9000 steps is 90°, outside the soft limits -30…45°; going to 45° (4500 steps)"])
        // Already at the limit: nothing moves, Dragonframe learns where the axis is.
        let again = device.handle(.moveMotor(motor: 1, position: -8000), still(tilt: -30, ticks: 100))
        #expect(again.replies == ["mp 1 -3000"])
        #expect(again.commands.isEmpty)
    }

    @Test mutating func aSecondMotorJoinsAMoveUnderWay() {
        _ = device.handle(.moveMotor(motor: 1, position: 1000), still(ticks: 10))
        let r = device.handle(.moveMotor(motor: 2, position: -500), moving(tilt: 2, tiltVelocity: 20, ticks: 30))
        #expect(r.commands == [.goTo(pose: [-5, 10, nil])])
    }

    @Test mutating func pulseRateOnlyLowersTheSpeed() {
        let r = device.handle(.pulseRate(motor: 2, stepsPerSecond: 4500), still())
        #expect(r.replies == ["pr 2 4500"])
        #expect(r.commands == [.setSpeedScale(axis: 0, fraction: 0.5)])
        let fast = device.handle(.pulseRate(motor: 2, stepsPerSecond: 100_000), still())
        #expect(fast.commands == [.setSpeedScale(axis: 0, fraction: 1)])
        // The rate really used: pan's 90°/s at 100 steps per degree.
        #expect(fast.replies == ["pr 2 9000"])
        #expect(fast.log.first?.contains("over axis \"pan\"'s maxVelocity 90°/s") == true)
        #expect(device.speedFractions == [1, 1])
    }

    @Test mutating func jogSpeedIsAFractionOfThePulseRateAndMovesRestoreIt() {
        _ = device.handle(.pulseRate(motor: 1, stepsPerSecond: 3000), still())  // 30°/s of 60
        let jog = device.handle(.jogMotor(motor: 1, destination: 4000, velocity: 5000), still())
        #expect(jog.replies == ["jm 1"])
        #expect(jog.commands == [.setSpeedScale(axis: 1, fraction: 0.25), .goTo(pose: [nil, 40, nil])])
        _ = device.handle(.stopMotor(motor: 1), moving(tilt: 3, tiltVelocity: 15))
        let move = device.handle(.moveMotor(motor: 1, position: 0), still(tilt: 5, ticks: 50))
        #expect(move.commands == [.setSpeedScale(axis: 1, fraction: 0.5), .goTo(pose: [nil, 0, nil])])
        let inch = device.handle(.inchMotor(motor: 1, destination: 100), still(ticks: 90))
        #expect(inch.replies == ["im 1"])
        #expect(inch.commands == [.setSpeedScale(axis: 1, fraction: 0.5 * DFMocoDevice.inchSpeedFraction), .goTo(pose: [nil, 1, nil])])
    }

    @Test mutating func stoppingOneMotorKeepsTheOtherGoing() {
        _ = device.handle(.moveMotor(motor: 1, position: 1000), still(ticks: 10))
        _ = device.handle(.moveMotor(motor: 2, position: 3000), still(ticks: 10))
        let both = moving(pan: 5, tilt: 5, panVelocity: 40, tiltVelocity: 40, ticks: 50)
        let r = device.handle(.stopMotor(motor: 1), both)
        #expect(r.replies == ["sm 1"])
        #expect(r.commands == [.goTo(pose: [30, nil, nil])])
        let last = device.handle(.stopMotor(motor: 2), both)
        #expect(last.commands == [.halt])
        // A motor that is not moving: nothing to brake.
        let idle = device.handle(.stopMotor(motor: 1), still(ticks: 400))
        #expect(idle.replies == ["sm 1"])
        #expect(idle.commands.isEmpty)
    }

    @Test mutating func aRequestForAMotorItDoesNotHaveIsIgnored() {
        let r = device.handle(.moveMotor(motor: 3, position: 10), still())
        #expect(r.replies.isEmpty && r.commands.isEmpty)
        #expect(r.log == ["mm: a motor out of range 1…2; ignored"])
    }

    @Test mutating func stopAllBrakesAndForgetsTargets() {
        _ = device.handle(.moveMotor(motor: 1, position: 1000), still(ticks: 10))
        let r = device.handle(.stopAll, moving(tilt: 5, tiltVelocity: 40, ticks: 50))
        #expect(r.replies == ["sa"])
        #expect(r.commands == [.halt])
        #expect(device.targets == [nil, nil])
        #expect(device.disconnected().commands == [.halt])
    }

    @Test mutating func zeroAndNewPositionShiftTheStepCountAndMoveNothing() {
        let here = still(pan: 0, tilt: 12.34)
        #expect(device.handle(.motorPosition(motor: 1), here).replies == ["mp 1 1234"])
        let zero = device.handle(.zeroMotor(motor: 1), here)
        #expect(zero.replies == ["zm 1"])
        #expect(zero.commands.isEmpty)
        #expect(device.handle(.motorPosition(motor: 1), here).replies == ["mp 1 0"])
        let set = device.handle(.newPosition(motor: 1, position: 500), here)
        #expect(set.replies == ["np 1 500"])
        #expect(set.commands.isEmpty)
        #expect(device.handle(.motorPosition(motor: 1), here).replies == ["mp 1 500"])
        #expect(device.handle(.motorPosition(motor: 2), here).replies == ["mp 2 0"])
        // Steps now count from the new origin: 600 is one degree further.
        let move = device.handle(.moveMotor(motor: 1, position: 600), here)
        guard case .goTo(let pose) = move.commands.last, let tilt = pose[1] else {
            Issue.record("no move: \(move.commands)")
            return
        }
        #expect(abs(tilt - 13.34) < 1e-9)
    }

    @Test mutating func goMotionApproachesTheStartThenFollowsThePlan() throws {
        // Tilt: p0 0°, p1 10°, p2 20°, 200 ms at blur 500: the shutter opens at 5°, closes at
        // 15°, so 50°/s through the exposure; the 1 s ramp starts 25° before 5°.
        let bf = device.handle(
            .blurSetup(
                GoMotionRequest(
                    exposureMilliseconds: 200, blur: 500,
                    motors: [.init(motor: 1, previous: 0, current: 1000, next: 2000)])), still(ticks: 10))
        // The go-motion delay: the 1-s ramp before the shutter window.
        #expect(bf.replies == ["bf 1000"])
        #expect(bf.commands == [.goTo(pose: [nil, -20, nil])])
        #expect(device.handle(.movingStatus, still(ticks: 11)).replies == ["ms 10"])
        // Dragonframe must wait for the approach: go (or another bf) while moving is refused.
        let early = device.handle(.go, still(ticks: 11))
        #expect(early.replies == ["parse error"] && early.commands.isEmpty)
        #expect(device.handle(.blurSetup(GoMotionRequest(exposureMilliseconds: 200, blur: 500, motors: [])), still(ticks: 11)).replies == ["parse error"])
        let go = device.handle(.go, still(tilt: -20, ticks: 300))
        #expect(go.replies == ["go"])
        guard case .follow(let tracks) = go.commands.first, let tilt = tracks[1] else {
            Issue.record("no follow: \(go.commands)")
            return
        }
        #expect(tracks[0] == nil && tracks[2] == nil)
        #expect(abs(tilt.value(at: 0) + 20) < 1e-9)
        #expect(abs(tilt.value(at: 1.0) - 5) < 1e-9)
        #expect(abs(tilt.value(at: 1.1) - 10) < 1e-9)
        #expect(abs(tilt.value(at: 1.2) - 15) < 1e-9)
        #expect(device.handle(.movingStatus, still(tilt: -20, ticks: 301)).replies == ["ms 10"])
        // The plan is used up.
        let again = device.handle(.go, still(tilt: 40, ticks: 600))
        #expect(again.commands.isEmpty)
        #expect(again.replies == ["parse error"])
        #expect(again.log == ["go without a go-motion set-up (bf): refused (parse error); nothing moves"])
    }

    /// A blur the limits would bend is refused with `bf -1`; nothing moves and `go` then
    /// has no set-up.
    @Test mutating func aGoMotionTheLimitsWouldBendIsRefused() {
        // Tilt 0 → 100 → 200 steps per degree… 1000 steps in 20 ms of exposure: far past 90°/s.
        let bf = device.handle(
            .blurSetup(
                GoMotionRequest(
                    exposureMilliseconds: 20, blur: 1000,
                    motors: [.init(motor: 1, previous: 0, current: 1000, next: 2000)])), still(ticks: 10))
        #expect(bf.replies == ["bf -1"])
        #expect(bf.commands.isEmpty)
        #expect(bf.log.contains { $0.hasPrefix("go-motion refused (bf -1): axis") })
        #expect(device.handle(.go, still(ticks: 300)).replies == ["parse error"])
    }
}
