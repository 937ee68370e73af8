import RigGroup

/// What the rig is doing, as the API says it (`state`): the one place its words are
/// decided on, so no decision compares a string.
public enum ServeState: String, Sendable, Equatable, Encodable, CustomStringConvertible {
    case idle, moving, playing, paused, waiting, jogging, fault
    /// A program waits for its `"start"` (a clock time or a sun event): nothing moves
    /// until then; STOP cancels it. `start` says when.
    case scheduled

    /// At rest: nothing moves and nothing will until asked (a program waiting at a step,
    /// or held, counts: it moves only on Next or resume).
    public var isResting: Bool {
        switch self {
        case .idle, .waiting, .paused, .fault, .scheduled: true
        case .moving, .playing, .jogging: false
        }
    }

    /// A program waits for the operator (Next, back, redo apply).
    public var waitsForOperator: Bool { self == .waiting || self == .paused }

    public var description: String { rawValue }
}

/// What `GET /api/status` and every `/api/events` message say. Every field is always
/// present (null when it does not apply), so a client never guesses.
public struct ServeStatus: Sendable, Equatable, Encodable {
    public struct OutputState: Sendable, Equatable, Encodable {
        /// `sim`, `pca9685` or `blecontrol`.
        public var type: String
        /// `running`, `stopped`, or the output's own line ("reconnecting (2)").
        public var state: String
    }

    public var state: ServeState
    /// The program file playing.
    public var program: String?
    /// 1-based step of a stepped program, and the step count.
    public var step: Int?
    public var steps: Int?
    public var elapsedSeconds: Double?
    /// Estimated seconds left (nil when the program waits for the operator at each step).
    public var etaSeconds: Double?
    /// Axis name → position, in the axis's unit.
    public var pose: [String: Double]
    public var output: OutputState
    public var error: String?
    /// The client that holds control, if any.
    public var controller: String?
    /// Who stopped the last program with STOP, and where it was (until the next one plays),
    /// so the phone whose run another client stopped is told so.
    public var lastStop: LastStop?

    /// The last frame the rig's camera took (null without a camera, or before the first):
    /// what the phone shows under the controls.
    public var lastShot: LastShot?

    /// The rig's camera: null when the rig has none (or `--no-shoot`).
    public var camera: CameraState?

    /// The nudge on the playing program's exposure ramp (EV, positive brighter); nil
    /// unless a program with a ramp plays.
    public var nudgeEV: Double? = nil

    /// The group this server leads (`rig serve --group`): every rig's state and next step,
    /// during a program and after it; nil when it leads none (or before its first program).
    public var group: GroupSnapshot? = nil

    /// The start a `scheduled` program waits for; nil otherwise.
    public var start: StartStatus? = nil

    public struct StartStatus: Sendable, Equatable, Encodable {
        /// UTC, ISO 8601 to the second.
        public var at: String
        /// The sun event it was given by ("sunset − 30 min"), or null for a time.
        public var event: String?
        /// Seconds left, rounded up.
        public var inSeconds: Double
        /// "16:02 local (sunset − 30 min; 2026-11-26 15:02:00 UTC)", as `rig play` says it.
        public var text: String

        private enum Keys: String, CodingKey { case at, event, inSeconds, text }

        public func encode(to encoder: Encoder) throws {
            var c = encoder.container(keyedBy: Keys.self)
            try c.encode(at, forKey: .at)
            try c.encode(event, forKey: .event)
            try c.encode(inSeconds, forKey: .inSeconds)
            try c.encode(text, forKey: .text)
        }
    }

    public struct CameraState: Sendable, Equatable, Encodable {
        /// `connected`, or `not connected` (off or not found: the server looks for it
        /// every few seconds and uses it once found).
        public var state: String
        /// What it is ("gphoto2 Nikon DSC D750 on usb:001,001"), or what the rig file says.
        public var label: String
        /// Why it is not connected, while it is not.
        public var problem: String?
        /// Its live view (`GET /api/liveview`); null while the camera is not connected.
        public var liveView: LiveViewStatus?

        private enum Keys: String, CodingKey { case state, label, problem, liveView }

        public func encode(to encoder: Encoder) throws {
            var c = encoder.container(keyedBy: Keys.self)
            try c.encode(state, forKey: .state)
            try c.encode(label, forKey: .label)
            try c.encode(problem, forKey: .problem)
            try c.encode(liveView, forKey: .liveView)
        }
    }

    /// The camera's live view: `off` (nobody watches), `on`, `paused` (a shot), `stalled`
    /// (frames stopped coming: said once), `failed` (tried again while someone watches), `unsupported` (the camera has none: `problem`
    /// says so in one line), `closed` (the server is stopping).
    public struct LiveViewStatus: Sendable, Equatable, Encodable {
        public var state: String
        public var problem: String?
        /// Viewers watching now.
        public var viewers: Int
        /// Tap to focus.
        public var focus: FocusStatus
        /// The lens's horizontal field of view where the camera says it (the simulated
        /// camera's `fovDeg`): the page's level line and tap to aim use it.
        public var fovDeg: Double?

        private enum Keys: String, CodingKey { case state, problem, viewers, focus, fovDeg }

        public func encode(to encoder: Encoder) throws {
            var c = encoder.container(keyedBy: Keys.self)
            try c.encode(state, forKey: .state)
            try c.encode(problem, forKey: .problem)
            try c.encode(viewers, forKey: .viewers)
            try c.encode(focus, forKey: .focus)
            try c.encode(fovDeg, forKey: .fovDeg)
        }
    }

    /// Tap to focus: whether a tap can move the camera's AF point (`problem`: the one line
    /// why not), and where the last tap put it in the view.
    public struct FocusStatus: Sendable, Equatable, Encodable {
        public var available: Bool
        public var problem: String?
        public var point: ViewPoint?

        private enum Keys: String, CodingKey { case available, problem, point }

        public func encode(to encoder: Encoder) throws {
            var c = encoder.container(keyedBy: Keys.self)
            try c.encode(available, forKey: .available)
            try c.encode(problem, forKey: .problem)
            try c.encode(point, forKey: .point)
        }
    }

    /// A point of the live view: `x` across from its left edge, `y` down from its top, 0…1.
    public struct ViewPoint: Sendable, Equatable, Encodable {
        public var x: Double
        public var y: Double
    }

    /// The server's monotonic clock when this status was made, in ms: what a jog's `began`
    /// is given in (`JogGuard`). Set by the server as it sends the status.
    public var clock: Double?

    /// `seconds` on the server's clock as the status's `clock` (whole ms).
    public static func clock(_ seconds: Double) -> Double { (seconds * 1000).rounded() }

    public struct LastShot: Sendable, Equatable, Encodable {
        public var program: String
        public var step: Int
        public var bracket: Int?
        /// The file the camera reported (gphoto2), if any.
        public var file: String?
        /// The settings it was taken with, as the camera names them.
        public var settings: [String: String]
        /// Its measure, once the frame was downloaded (or simulated).
        public var brightnessEV: Double?
        public var clippedHigh: Double?
        public var clippedLow: Double?
        /// A small preview at `/api/last-shot/preview`.
        public var preview: Bool
        /// 16 bins of thousandths of the pixels, dark to light.
        public var histogram: [Int]?
        /// The shot the camera failed, and why (the program stopped).
        public var missed: String?
        /// The camera's battery as last read ("50%"), if it reports one.
        public var battery: String?
        /// A test shot (`POST /api/testshot`), not a frame of a run.
        public var test = false

        private enum Keys: String, CodingKey {
            case program, step, bracket, file, settings, brightnessEV, clippedHigh, clippedLow, preview, histogram, missed, battery, test
        }

        /// Every field, null when unknown (a gphoto2 camera without `download` never measures).
        public func encode(to encoder: Encoder) throws {
            var c = encoder.container(keyedBy: Keys.self)
            try c.encode(program, forKey: .program)
            try c.encode(step, forKey: .step)
            try c.encode(bracket, forKey: .bracket)
            try c.encode(file, forKey: .file)
            try c.encode(settings, forKey: .settings)
            try c.encode(brightnessEV, forKey: .brightnessEV)
            try c.encode(clippedHigh, forKey: .clippedHigh)
            try c.encode(clippedLow, forKey: .clippedLow)
            try c.encode(preview, forKey: .preview)
            try c.encode(histogram, forKey: .histogram)
            try c.encode(missed, forKey: .missed)
            try c.encode(battery, forKey: .battery)
            try c.encode(test, forKey: .test)
        }
    }

    public struct LastStop: Sendable, Equatable, Encodable {
        /// The display name of the client that sent STOP.
        public var by: String
        public var program: String
        public var step: Int?

        private enum Keys: String, CodingKey { case by, program, step }

        public func encode(to encoder: Encoder) throws {
            var c = encoder.container(keyedBy: Keys.self)
            try c.encode(by, forKey: .by)
            try c.encode(program, forKey: .program)
            try c.encode(step, forKey: .step)
        }
    }

    private enum Keys: String, CodingKey {
        case state, program, step, steps, elapsedSeconds, etaSeconds, pose, output, error, controller, lastStop, lastShot, camera, clock, nudgeEV, group, start
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: Keys.self)
        try c.encode(state, forKey: .state)
        try c.encode(program, forKey: .program)
        try c.encode(step, forKey: .step)
        try c.encode(steps, forKey: .steps)
        try c.encode(elapsedSeconds, forKey: .elapsedSeconds)
        try c.encode(etaSeconds, forKey: .etaSeconds)
        try c.encode(pose, forKey: .pose)
        try c.encode(output, forKey: .output)
        try c.encode(error, forKey: .error)
        try c.encode(controller, forKey: .controller)
        try c.encode(lastStop, forKey: .lastStop)
        try c.encode(lastShot, forKey: .lastShot)
        try c.encode(camera, forKey: .camera)
        try c.encode(clock, forKey: .clock)
        try c.encode(nudgeEV, forKey: .nudgeEV)
        try c.encode(group, forKey: .group)
        try c.encode(start, forKey: .start)
    }

    /// The same apart from elapsed time and ETA (the events stream sends those changes
    /// once a second, not at the loop's rate).
    func sameApartFromTheClock(_ other: ServeStatus) -> Bool {
        var a = self
        var b = other
        a.elapsedSeconds = nil
        a.etaSeconds = nil
        a.clock = nil
        a.start?.inSeconds = 0
        b.elapsedSeconds = nil
        b.etaSeconds = nil
        b.clock = nil
        b.start?.inSeconds = 0
        return a == b
    }

    /// Something moves (the events stream then sends at least 5 messages a second).
    public var isMoving: Bool { !state.isResting }
}
