/// One request line from Dragonframe, checked: motors are in range (1-based, as on the
/// wire) and every number is an integer within the protocol's bounds.
public enum DFMocoRequest: Sendable, Equatable {
    /// `hi`: the handshake.
    case hello
    /// `ms`: which motors are moving.
    case movingStatus
    /// `mm <motor> <pos>`: move to an absolute step position.
    case moveMotor(motor: Int, position: Int)
    /// `mp <motor>`: where a motor is.
    case motorPosition(motor: Int)
    /// `sm <motor>`: stop that motor fairly quickly.
    case stopMotor(motor: Int)
    /// `sa`: stop every motor fairly quickly.
    case stopAll
    /// `jm <motor> <dest> [<velocity>]`: jog towards `destination`; velocity 0…10000 is
    /// 0…100 % of the motor's pulse rate (protocol major version ≥ 2).
    case jogMotor(motor: Int, destination: Int, velocity: Int?)
    /// `im <motor> <dest>`: inch towards `destination` slowly.
    case inchMotor(motor: Int, destination: Int)
    /// `pr <motor> <steps/s>`: the motor's maximum step rate (> 0).
    case pulseRate(motor: Int, stepsPerSecond: Int)
    /// `zm <motor>`: the current position becomes 0; nothing moves.
    case zeroMotor(motor: Int)
    /// `np <motor> <pos>`: the current position becomes `position`; nothing moves.
    case newPosition(motor: Int, position: Int)
    /// `bf <exposure ms> <blur 0–1000> [<motor> <p0> <p1> <p2>]…`: go-motion set-up.
    case blurSetup(GoMotionRequest)
    /// `go`: start the go-motion move set up by `bf`.
    case go

    /// The motors the request names (1-based).
    public var motors: [Int] {
        switch self {
        case .hello, .movingStatus, .stopAll, .go: []
        case .moveMotor(let m, _), .motorPosition(let m), .stopMotor(let m), .jogMotor(let m, _, _), .inchMotor(let m, _),
            .pulseRate(let m, _), .zeroMotor(let m), .newPosition(let m, _):
            [m]
        case .blurSetup(let request): request.motors.map(\.motor)
        }
    }

    /// The two-letter command, as on the wire.
    public var command: String {
        switch self {
        case .hello: "hi"
        case .movingStatus: "ms"
        case .moveMotor: "mm"
        case .motorPosition: "mp"
        case .stopMotor: "sm"
        case .stopAll: "sa"
        case .jogMotor: "jm"
        case .inchMotor: "im"
        case .pulseRate: "pr"
        case .zeroMotor: "zm"
        case .newPosition: "np"
        case .blurSetup: "bf"
        case .go: "go"
        }
    }
}

/// A `bf` line: the exposure, the blur and, per motor, the previous, current and next
/// frame's positions in steps.
public struct GoMotionRequest: Sendable, Equatable {
    public struct Motor: Sendable, Equatable {
        /// 1-based.
        public var motor: Int
        public var previous: Int
        public var current: Int
        public var next: Int

        public init(motor: Int, previous: Int, current: Int, next: Int) {
            self.motor = motor
            self.previous = previous
            self.current = current
            self.next = next
        }
    }

    public var exposureMilliseconds: Int
    /// 0…1000: the fraction of the way to the previous and next frames the exposure spans
    /// (500 is a 180° shutter).
    public var blur: Int
    public var motors: [Motor]

    public init(exposureMilliseconds: Int, blur: Int, motors: [Motor]) {
        self.exposureMilliseconds = exposureMilliseconds
        self.blur = blur
        self.motors = motors
    }
}
