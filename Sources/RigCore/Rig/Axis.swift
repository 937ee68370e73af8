import RigFormat

/// What an axis drives.
public enum AxisKind: String, Sendable, Equatable {
    /// A hobby servo: positions in degrees, sent as pulse widths.
    case servo
    /// A PWM channel (an LED light, a DC motor's speed): positions are the duty cycle in %.
    case pwm
}

/// What an axis does when the rig is idle or shut down.
public enum IdlePolicy: String, Sendable, Equatable {
    /// Keep sending the last position (the servo holds against load).
    case hold
    /// Stop the pulses (the servo goes limp; a pwm channel goes off).
    case release
}

/// One controlled axis of a rig. Positions are degrees for servo axes and duty-cycle
/// percent for pwm axes; velocities are per second, accelerations per second².
public struct Axis: Sendable, Equatable {
    public var name: String
    public var kind: AxisKind
    public var channel: Int
    /// Angle ↔ pulse mapping (servo axes only; nil for pwm).
    public var calibration: Calibration?
    public var home: Double
    /// Where to go on shutdown before the safe state, if anywhere.
    public var park: Double?
    public var softMin: Double
    public var softMax: Double
    public var maxVelocity: Double
    public var maxAcceleration: Double
    /// Largest jerk of planned moves (lead-in, step moves, park, go-home), units/s³.
    /// Default `maxAcceleration / defaultJerkRampSeconds`, on a shaped axis
    /// `maxAcceleration / shapedJerkRampSeconds`.
    public var maxJerk: Double
    public var idle: IdlePolicy
    /// Gear lash in the axis's unit (`"backlashDeg"`): stepped programs approach every
    /// step from below, overshooting by this much when they come from above, so the lash
    /// is taken up the same way at every shot. 0: no overshoot.
    public var backlashDeg = 0.0
    /// The camera on this axis as a spring (`"payload"`), if known: the simulated output
    /// rings with it.
    public var payload: Payload?
    /// The servo's deadband and lag (`"deadbandDeg"`, `"lagSeconds"`), for the simulator.
    public var servo = ServoImperfection()
    /// The input shaper every planned move and keyframe path of this axis goes through
    /// (`"shaper"`); nil: unshaped.
    public var shaper: ShaperConfig?

    /// The default ramp time from zero to full acceleration: `maxJerk` defaults to
    /// `maxAcceleration / defaultJerkRampSeconds`.
    public static let defaultJerkRampSeconds = 0.1
    /// A shaped axis's default ramp (the shortest allowed, less than a tick at every loop
    /// rate): its moves are trapezoids. The shaper turns each acceleration step into a
    /// staircase of its impulses that leaves no ringing at its frequency (Klipper plans
    /// shaped moves so), and the shaped output is a convex combination of the reference
    /// (within its velocity and acceleration); an S-curve's ramp on top only adds time.
    public static let shapedJerkRampSeconds = 0.001
    /// Bounds of `maxJerk` as ramp times (`maxAcceleration / maxJerk`): 1 ms … 1 s.
    public static let jerkRampSecondsRange = 0.001...1.0

    public init(
        name: String, kind: AxisKind, channel: Int, calibration: Calibration?, home: Double, park: Double?,
        softMin: Double, softMax: Double, maxVelocity: Double, maxAcceleration: Double, maxJerk: Double? = nil,
        idle: IdlePolicy
    ) {
        self.name = name
        self.kind = kind
        self.channel = channel
        self.calibration = calibration
        self.home = home
        self.park = park
        self.softMin = softMin
        self.softMax = softMax
        self.maxVelocity = maxVelocity
        self.maxAcceleration = maxAcceleration
        self.maxJerk = maxJerk ?? maxAcceleration / Self.defaultJerkRampSeconds
        self.idle = idle
    }

    public var softRange: ClosedRange<Double> { softMin...softMax }

    /// This axis for a move its shaper does not smooth (a command's go-to, jog's go-home,
    /// a stop's park from a command, a stall's resume): its jerk at most an S-curve's
    /// default ramp, so a shaped axis's trapezoid default (`shapedJerkRampSeconds`) never
    /// reaches an unshaped move.
    public var forUnshapedMoves: Axis {
        guard shaper != nil else { return self }
        var axis = self
        axis.maxJerk = min(maxJerk, maxAcceleration / Self.defaultJerkRampSeconds)
        return axis
    }

    /// What the output should do for `position` this tick.
    @inline(__always)
    public func command(forPosition position: Double) -> ChannelCommand {
        switch kind {
        case .servo:
            .pulse(microseconds: calibration?.pulseMicroseconds(forAngle: position) ?? 1500)
        case .pwm:
            .duty(percent: position)
        }
    }

    /// What the output must be left at when the rig stops.
    public func safeCommand(lastPosition: Double) -> ChannelCommand {
        idle == .release ? .off : command(forPosition: lastPosition)
    }

    /// The unit positions are measured in, for messages.
    public var unit: String { kind == .servo ? "°" : "%" }
}

/// What one channel is told to do this tick.
public enum ChannelCommand: Sendable, Equatable {
    /// A servo pulse of this width.
    case pulse(microseconds: Double)
    /// A PWM duty cycle in percent (0…100).
    case duty(percent: Double)
    /// No output (servo limp, PWM off).
    case off
}

/// The servo frame period every output assumes for pwm axes when it reports a pulse.
public let servoFramePeriodMicroseconds = 20_000.0
