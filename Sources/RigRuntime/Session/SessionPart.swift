import RigCore

/// A part of a run beside the output: the camera, the shot runner and its log, the step
/// trigger, jog's notices, a server that answers while the loop runs. The session locks
/// what every part declares once, starts the parts in order once the output runs, tells
/// each every loop event, and finishes each exactly once, in reverse order, with the run's
/// one typed outcome, on every way out (a part that never started included).
public protocol SessionPart: AnyObject {
    /// For errors and the log ("camera", "trigger").
    var partName: String { get }
    /// Hardware the part uses exclusively, as `HardwareLock` names: locked with the
    /// output's before anything starts.
    var exclusiveResources: [String] { get }
    /// Starts, once the locks are held, the output runs and the loop exists (before its
    /// first tick). `door` is the part's only way into the loop.
    func start(_ door: SessionDoor) throws(PartStartFailure)
    /// Every loop event, in order, on the session's event thread.
    func handle(_ event: LoopEvent)
    /// Every time the event thread wakes (at least every `viewIntervalSeconds`), and once
    /// more after the loop ended.
    func poll()
    /// Exactly once, after the loop ended or the session was refused.
    func finish(_ outcome: SessionOutcome)
}

extension SessionPart {
    public var exclusiveResources: [String] { [] }
    public func start(_ door: SessionDoor) throws(PartStartFailure) {}
    public func handle(_ event: LoopEvent) {}
    public func poll() {}
    public func finish(_ outcome: SessionOutcome) {}
}

/// A part's way into the running loop: requests go through the loop's one mailbox, a stop
/// through the session (brake, park, safe state, like every other stop).
public struct SessionDoor: Sendable {
    public let mailbox: SourceMailbox
    /// The session's shutdown (`RigSession.requestShutdown()`): brake, park, safe state.
    public let stop: @Sendable () -> Void
    /// Steps of the program the run started with (0: none, or a server's programs).
    public let stepCount: Int
    /// The pose of the loop's last frame (nil before its first): for a part that follows
    /// where the rig points (the simulated camera's live view).
    public let pose: @Sendable () -> [Double]?

    /// Where the camera points (nil before the loop's first frame): the output's modelled
    /// camera when it models one (the simulator's payload, stamped with its write), else
    /// the loop's pose. The simulated camera's live view draws from it.
    public let cameraPose: @Sendable () -> CameraPose?

    public init(
        mailbox: SourceMailbox, stop: @escaping @Sendable () -> Void, stepCount: Int = 0, pose: @escaping @Sendable () -> [Double]? = { nil },
        cameraPose: (@Sendable () -> CameraPose?)? = nil
    ) {
        self.cameraPose = cameraPose ?? { pose().map { CameraPose($0) } }
        self.mailbox = mailbox
        self.stop = stop
        self.stepCount = stepCount
        self.pose = pose
    }

    /// A trigger's controls: each is a request to the loop.
    public var stepControls: StepControls {
        StepControls(
            advance: { [mailbox] in mailbox.post(.advance) }, redo: { [mailbox] in mailbox.post(SourceRequest.redo) },
            goTo: { [mailbox] in mailbox.post(.goTo(step: max($0, 0))) }, stop: stop,
            goHome: { [mailbox] in mailbox.post(.goHome) })
    }
}

/// How a session ended, for every part alike.
public enum SessionOutcome: Sendable {
    /// The loop ran; how it ended.
    case ran(SessionSummary)
    /// The session was refused before anything moved (or a part could not start and the
    /// output went back to its safe state).
    case refused(SessionError)

    /// Why the run failed, for a log: nil when it ended normally (its end, a stop, a
    /// signal, an abort by a second signal).
    public var failure: String? {
        switch self {
        case .refused(let error): "\(error)"
        case .ran(let summary): summary.exitCode != 0 ? (summary.loop.fault.map { "\($0)" } ?? "\(summary.end)") : nil
        }
    }

    public var stoppedBySignal: Bool {
        if case .ran(let summary) = self { summary.stoppedBySignal } else { false }
    }

    /// What the parts should tell a person after the run (a Cascable recipe that waited a
    /// different number of times than the program has steps).
    public var warnings: [String] {
        if case .ran(let summary) = self { summary.warnings } else { [] }
    }
}

/// Why a part of the session could not start, typed as output faults are. Nothing moved:
/// the output is in its safe state again.
public struct PartStartFailure: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Cause: Sendable, Equatable {
        /// The output could not start (its own typed fault).
        case output(OutputFault.Cause)
        /// What the part needs is not there or does not answer (a camera off, no Bluetooth
        /// adapter, a GPIO chip missing, the system bus unreachable).
        case unavailable
        /// The part refused its own settings (a setting the device does not have).
        case refused
    }

    /// The part ("output", "camera", "trigger").
    public var part: String
    public var cause: Cause
    /// What happened and what to check, for a person.
    public var detail: String

    public init(part: String, cause: Cause, detail: String) {
        self.part = part
        self.cause = cause
        self.detail = detail
    }

    /// Types whatever a part's start threw.
    public init(part: String, error: any Error) {
        switch error {
        case let failure as PartStartFailure: self = failure
        case let fault as OutputFault: self.init(part: part, cause: .output(fault.cause), detail: fault.description)
        case let camera as CameraError: self.init(part: part, cause: camera.refused ? .refused : .unavailable, detail: camera.description)
        default: self.init(part: part, cause: .unavailable, detail: "\(error)")
        }
    }

    /// The output names its device itself; other parts are named.
    public var description: String { part == "output" || part == "trigger" ? detail : "\(part): \(detail)" }
}

/// The run's camera as a session part: its hardware locked with the output's, taken first
/// and closed last (after the shots' log has its last frame). Its live view follows the
/// rig's pose, and ends with the run.
final class CameraPart: SessionPart {
    let camera: Camera
    init(_ camera: Camera) { self.camera = camera }
    var partName: String { "camera" }
    var exclusiveResources: [String] { camera.exclusiveResources }
    func start(_ door: SessionDoor) throws(PartStartFailure) {
        do { try camera.start() } catch { throw PartStartFailure(part: partName, error: error) }
        (camera as? LiveViewSource)?.follow(pose: door.cameraPose)
    }
    func finish(_ outcome: SessionOutcome) {
        (camera as? LiveViewSource)?.liveView.close()
        camera.close()
    }
}

/// The step trigger as a session part: started last (it moves the program on), told every
/// player event, stopped first.
final class TriggerPart: SessionPart {
    let trigger: StepTrigger
    private var stepCount = 0
    /// Started, or tried to (a start that failed halfway is stopped too).
    private var attempted = false
    init(_ trigger: StepTrigger) { self.trigger = trigger }
    var partName: String { "trigger" }
    var exclusiveResources: [String] { trigger.exclusiveResources }
    func start(_ door: SessionDoor) throws(PartStartFailure) {
        stepCount = door.stepCount
        attempted = true
        do { try trigger.start(door.stepControls) } catch { throw PartStartFailure(part: partName, error: error) }
    }
    func handle(_ event: LoopEvent) {
        if case .player(let e, _) = event { trigger.handle(e, stepCount: stepCount) }
    }
    func finish(_ outcome: SessionOutcome) { if attempted { trigger.stop() } }
}
