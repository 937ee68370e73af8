import RigCore

/// The device side of DFMoco, without I/O: each request, with what the rig is doing now,
/// becomes the reply lines, the motion commands for the rig's `CommandSource`, and log
/// lines. Targets are clamped to the soft limits here (and logged), so that `ms` and
/// `mp` tell Dragonframe the truth about where an axis goes.
public struct DFMocoDevice: Sendable {
    /// What the rig is doing, from the control loop's last status (per rig axis).
    public struct Observation: Sendable, Equatable {
        public var positions: [Double]
        public var velocities: [Double]
        /// Loop ticks run so far.
        public var ticks: Int
        /// The rig's measured settle (an IMU on the camera) has not yet found the head still
        /// after its last move (within the settle's timeout): `ms` says every motor moves, so
        /// Dragonframe shoots once the head is still.
        public var settling: Bool

        public init(positions: [Double], velocities: [Double], ticks: Int, settling: Bool = false) {
            self.positions = positions
            self.velocities = velocities
            self.ticks = ticks
            self.settling = settling
        }
    }

    /// What to do about one request.
    public struct Response: Sendable, Equatable {
        /// Lines to send, without `\r\n`.
        public var replies: [String] = []
        /// To post to the loop's mailbox, in order.
        public var commands: [MotionCommand] = []
        /// Notable events (clamped targets, capped speeds, go-motion warnings).
        public var log: [String] = []

        public init(replies: [String] = [], commands: [MotionCommand] = [], log: [String] = []) {
            self.replies = replies
            self.commands = commands
            self.log = log
        }
    }

    /// DFMoco protocol major version: 2, so `jm` carries a velocity.
    public static let protocolMajorVersion = 2
    /// `im` inches at this fraction of the motor's speed.
    public static let inchSpeedFraction = 0.05
    /// The slowest `jm` asks for (velocity 0…10000 maps onto this…1).
    public static let slowestJogFraction = 0.001

    public let rig: Rig
    public let version: String
    public private(set) var map: DFMocoMotorMap
    /// Per motor: where it was last sent (degrees or %), while it may still be going there.
    public private(set) var targets: [Double?]
    /// Per motor: the speed cap from `pr`, as a fraction of maxVelocity.
    public private(set) var speedFractions: [Double]
    /// The go-motion move set up by `bf`, until `go` (or `sa`).
    public private(set) var goMotion: GoMotionPlan?
    private var appliedScales: [Double]
    /// Per motor: the loop tick count when a command that moves it was posted. Until the
    /// loop has run two more ticks it may not have seen the command yet: the motor counts
    /// as moving.
    private var postedAtTick: [Int?]
    /// Per motor: the tick its last move (or go-motion) was sent, kept through a stop.
    private var sentAtTick: [Int?]
    /// The last tick an observation had every motor still and the head settled.
    private var stillAtTick: Int?

    public init(rig: Rig, version: String) {
        self.rig = rig
        self.version = version
        map = DFMocoMotorMap(rig: rig)
        let n = map.motorCount
        targets = [Double?](repeating: nil, count: n)
        speedFractions = [Double](repeating: 1, count: n)
        appliedScales = [Double](repeating: 1, count: n)
        postedAtTick = [Int?](repeating: nil, count: n)
        sentAtTick = [Int?](repeating: nil, count: n)
    }

    /// A command that moves motor `m` was posted at the observation's tick.
    private mutating func sent(_ m: Int, _ observed: Observation) {
        postedAtTick[m] = observed.ticks
        sentAtTick[m] = observed.ticks
    }

    /// `ms`: a motor moves, or it moved since the rig was last seen still and the head is
    /// not yet measured still (the loop's `settling`): Dragonframe waits to shoot. A settle
    /// after another motor's move leaves this one at 0; a settle no motor's move explains
    /// (a jog from elsewhere) flags every motor.
    public mutating func movingDigits(_ observed: Observation) -> String {
        let moving = (0..<motorCount).map { isMoving(motor: $0, observed) }
        guard observed.settling else {
            if !moving.contains(true) { stillAtTick = observed.ticks }
            return moving.map { $0 ? "1" : "0" }.joined()
        }
        let moved = (0..<motorCount).map { m in sentAtTick[m].map { sent in stillAtTick.map { sent >= $0 } ?? true } ?? false }
        let explained = moved.contains(true)
        return (0..<motorCount).map { moving[$0] || moved[$0] || !explained ? "1" : "0" }.joined()
    }

    public var motorCount: Int { map.motorCount }

    /// The `hi` reply.
    public var hello: String { "hi \(Self.protocolMajorVersion) \(motorCount) \(version)" }

    /// Whether `motor` (0-based) moves or is about to.
    public func isMoving(motor m: Int, _ observed: Observation) -> Bool {
        let axis = map.axisIndices[m]
        if let posted = postedAtTick[m], observed.ticks < posted + 2 { return true }
        guard axis < observed.velocities.count else { return false }
        return abs(observed.velocities[axis]) > rig.axes[axis].maxVelocity * 1e-9
    }

    /// True while any motor moves (or was just sent off).
    public func anyMoving(_ observed: Observation) -> Bool {
        (0..<motorCount).contains { isMoving(motor: $0, observed) }
    }

    /// `mp <motor> <pos>` for `motor` (0-based).
    public func positionLine(motor m: Int, _ observed: Observation) -> String {
        "mp \(m + 1) \(steps(motor: m, observed))"
    }

    public func steps(motor m: Int, _ observed: Observation) -> Int {
        map.steps(motor: m, position: position(axis: map.axisIndices[m], observed))
    }

    /// Where `axis` is (home if the observation is short: it never traps).
    private func position(axis: Int, _ observed: Observation) -> Double {
        axis < observed.positions.count ? observed.positions[axis] : rig.axes[axis].home
    }

    /// Answers `request`. A request naming a motor this device does not have (the parser,
    /// given `motorCount`, never makes one) is logged and ignored.
    public mutating func handle(_ request: DFMocoRequest, _ observed: Observation) -> Response {
        var r = Response()
        guard request.motors.allSatisfy({ $0 >= 1 && $0 <= motorCount }) else {
            r.log.append("\(request.command): a motor out of range 1…\(motorCount); ignored")
            return r
        }
        switch request {
        case .hello:
            r.replies = [hello]
        case .movingStatus:
            r.replies = ["ms " + movingDigits(observed)]
        case .motorPosition(let motor):
            r.replies = [positionLine(motor: motor - 1, observed)]
        case .moveMotor(let motor, let position):
            let moving = move(motor - 1, to: position, scale: speedFractions[motor - 1], observed, &r)
            r.replies = [moving ? "mm \(motor) \(position)" : positionLine(motor: motor - 1, observed)]
        case .jogMotor(let motor, let destination, let velocity):
            let fraction = Double(velocity ?? 10_000) / 10_000
            _ = move(motor - 1, to: destination, scale: speedFractions[motor - 1] * max(fraction, Self.slowestJogFraction), observed, &r)
            r.replies = ["jm \(motor)"]
        case .inchMotor(let motor, let destination):
            _ = move(motor - 1, to: destination, scale: speedFractions[motor - 1] * Self.inchSpeedFraction, observed, &r)
            r.replies = ["im \(motor)"]
        case .stopMotor(let motor):
            let m = motor - 1
            let wasMoving = isMoving(motor: m, observed)
            targets[m] = nil
            postedAtTick[m] = nil
            let others = pendingPose(observed, adding: [])
            // The command source has one brake for the whole rig: stopping one motor
            // brakes all, and the others are sent on again from where they stop.
            if wasMoving { r.commands = [others.contains { $0 != nil } ? .goTo(pose: others) : .halt] }
            r.replies = ["sm \(motor)"]
        case .stopAll:
            stopEverything(&r)
            r.replies = ["sa"]
        case .pulseRate(let motor, let stepsPerSecond):
            let m = motor - 1
            let axis = map.axes[m]
            let wanted = Double(stepsPerSecond) / map.stepsPerDegree
            if wanted > axis.maxVelocity {
                r.log.append(
                    "pr \(motor) \(stepsPerSecond): \(short(wanted))\(axis.unit)/s is over axis \"\(axis.name)\"'s maxVelocity \(short(axis.maxVelocity))\(axis.unit)/s; keeping \(short(axis.maxVelocity))\(axis.unit)/s"
                )
            }
            speedFractions[m] = min(wanted / axis.maxVelocity, 1)
            applyScale(m, speedFractions[m], &r)
            // The rate really used, as the reference firmware answers (not the request).
            let fastest = max(1, Int((axis.maxVelocity * map.stepsPerDegree).rounded(.down)))
            r.replies = ["pr \(motor) \(min(stepsPerSecond, fastest))"]
        case .zeroMotor(let motor):
            let m = motor - 1
            map.setOffset(motor: m, position: position(axis: map.axisIndices[m], observed), steps: 0)
            r.replies = ["zm \(motor)"]
        case .newPosition(let motor, let position):
            let m = motor - 1
            map.setOffset(motor: m, position: self.position(axis: map.axisIndices[m], observed), steps: position)
            r.replies = ["np \(motor) \(position)"]
        case .blurSetup where anyMoving(observed), .go where anyMoving(observed):
            // As the reference firmware: no go-motion set-up or start while a motor moves.
            r.log.append("\(request.command) while a motor moves: refused (parse error); wait until ms reports all stopped")
            r.replies = ["parse error"]
        case .blurSetup(let request):
            // The go-motion delay in ms between `go` and the shutter window, or -1 when a
            // motor cannot reach the go-motion speed (the limits win; the blur will differ).
            let plan = setUpGoMotion(request, observed, &r)
            r.replies = [plan.warnings.isEmpty ? "bf \(Int((plan.exposureStartSeconds * 1000).rounded()))" : "bf -1"]
        case .go:
            guard goMotion != nil else {
                r.log.append("go without a go-motion set-up (bf): refused (parse error); nothing moves")
                r.replies = ["parse error"]
                return r
            }
            r.replies = ["go"]
            startGoMotion(observed, &r)
        }
        return r
    }

    /// The client went away: brake everything to rest, forget targets and go-motion.
    public mutating func disconnected() -> Response {
        var r = Response()
        stopEverything(&r)
        return r
    }

    // MARK: Moves

    /// Sends motor `m` to `steps` at `scale` of maxVelocity; false if it is there already.
    private mutating func move(_ m: Int, to steps: Int, scale: Double, _ observed: Observation, _ r: inout Response) -> Bool {
        let axisIndex = map.axisIndices[m]
        let axis = map.axes[m]
        let wanted = map.position(motor: m, steps: steps)
        let target = min(max(wanted, axis.softMin), axis.softMax)
        if target != wanted {
            r.log.append(
                "motor \(m + 1) (\(axis.name)): \(steps) steps is \(short(wanted))\(axis.unit), outside the soft limits \(short(axis.softMin))…\(short(axis.softMax))\(axis.unit); going to \(short(target))\(axis.unit) (\(map.steps(motor: m, position: target)) steps)"
            )
        }
        let here = position(axis: axisIndex, observed)
        if !isMoving(motor: m, observed), map.steps(motor: m, position: target) == map.steps(motor: m, position: here) {
            targets[m] = nil
            return false
        }
        applyScale(m, scale, &r)
        targets[m] = target
        r.commands.append(.goTo(pose: pendingPose(observed, adding: [m])))
        sent(m, observed)
        return true
    }

    /// A pose with the target of every motor still on its way (and of `motors`); nil for
    /// the rest.
    private func pendingPose(_ observed: Observation, adding motors: [Int]) -> [Double?] {
        var pose = [Double?](repeating: nil, count: rig.axes.count)
        for m in 0..<motorCount {
            guard let target = targets[m], motors.contains(m) || isMoving(motor: m, observed) else { continue }
            pose[map.axisIndices[m]] = target
        }
        return pose
    }

    private mutating func applyScale(_ m: Int, _ fraction: Double, _ r: inout Response) {
        let f = min(max(fraction, 1e-9), 1)
        guard appliedScales[m] != f else { return }
        appliedScales[m] = f
        r.commands.append(.setSpeedScale(axis: map.axisIndices[m], fraction: f))
    }

    private mutating func stopEverything(_ r: inout Response) {
        for m in 0..<motorCount {
            targets[m] = nil
            postedAtTick[m] = nil
        }
        goMotion = nil
        r.commands.append(.halt)
    }

    // MARK: Go-motion

    private mutating func setUpGoMotion(_ request: GoMotionRequest, _ observed: Observation, _ r: inout Response) -> GoMotionPlan {
        let motions = request.motors.map { motor in
            let m = motor.motor - 1
            return GoMotionPlan.Motion(
                axis: map.axisIndices[m], previous: map.position(motor: m, steps: motor.previous),
                current: map.position(motor: m, steps: motor.current),
                next: map.position(motor: m, steps: motor.next))
        }
        let plan = GoMotionPlan(
            rig: rig, motions: motions, exposureSeconds: Double(request.exposureMilliseconds) / 1000,
            blurFraction: Double(request.blur) / 1000)
        guard plan.warnings.isEmpty else {
            // The limits would bend the move, so the blur would not be what Dragonframe
            // planned: refused (`bf -1`), nothing moves; slow the move or shorten the blur.
            for warning in plan.warnings { r.log.append("go-motion refused (bf -1): \(warning)") }
            goMotion = nil
            return plan
        }
        goMotion = plan
        var started: [Int] = []
        for motor in request.motors {
            let m = motor.motor - 1
            guard let start = plan.startPose[map.axisIndices[m]] else { continue }
            let axis = map.axes[m]
            targets[m] = min(max(start, axis.softMin), axis.softMax)
            applyScale(m, speedFractions[m], &r)
            sent(m, observed)
            started.append(m)
        }
        if !started.isEmpty { r.commands.append(.goTo(pose: pendingPose(observed, adding: started))) }
        r.log.append(
            "go-motion: \(request.motors.count) motor\(request.motors.count == 1 ? "" : "s"), exposure \(request.exposureMilliseconds) ms, blur \(request.blur)/1000; moving to the start"
        )
        return plan
    }

    private mutating func startGoMotion(_ observed: Observation, _ r: inout Response) {
        guard let plan = goMotion else { return }
        goMotion = nil
        for m in 0..<motorCount {
            let axis = map.axisIndices[m]
            guard plan.tracks[axis] != nil else { continue }
            if let start = plan.startPose[axis], isMoving(motor: m, observed) || abs(position(axis: axis, observed) - start) > 0.5 / map.stepsPerDegree {
                r.log.append("go: motor \(m + 1) is not at rest at its start (\(short(start))\(map.axes[m].unit)); the move eases on from where it is")
            }
            targets[m] = nil
            sent(m, observed)
        }
        r.commands.append(.follow(tracks: plan.tracks))
        r.log.append("go-motion: shutter open \(short(plan.exposureStartSeconds))…\(short(plan.exposureEndSeconds)) s after go")
    }
}
