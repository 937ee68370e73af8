import FoundationEssentials
import Glibc
import RigFormat
import RigSky

/// What advances a stepped program to its next step.
public enum Trigger: Sendable, Equatable, CustomStringConvertible {
    /// The next step as soon as the rig has settled (demos and tests).
    case auto
    /// Enter in the terminal.
    case keyboard
    /// A shot every S seconds, shot start to shot start (each move starts so its shot keeps
    /// the interval).
    case interval(seconds: Double)
    /// Cascable's Wait For Input over Bluetooth LE.
    case bui
    /// Push buttons on GPIO lines.
    case gpio

    public static let syntax = "\"auto\", \"keyboard\", \"interval:SECONDS\", \"bui\" or \"gpio\""

    /// Parses `auto`, `keyboard`, `interval:S`, `bui`, `gpio`; nil when `parse` fails.
    public init?(_ text: String) {
        guard case .success(let trigger) = Trigger.parse(text) else { return nil }
        self = trigger
    }

    /// Why a trigger text is not valid, for the file or the command line.
    public struct Problem: Error, Sendable, Equatable {
        public var message: String
    }

    /// Parses `auto`, `keyboard`, `interval:S` (S within `Bounds.intervalSeconds`), `bui`,
    /// `gpio`; the failure says what is wrong and what is valid.
    public static func parse(_ text: String) -> Result<Trigger, Problem> {
        switch text {
        case "auto": return .success(.auto)
        case "keyboard": return .success(.keyboard)
        case "bui": return .success(.bui)
        case "gpio": return .success(.gpio)
        default:
            let bounds = Bounds.intervalSeconds
            if text.hasPrefix("interval:"), let s = Double(text.dropFirst("interval:".count)), !s.isNaN {
                guard bounds.contains(s) else {
                    return .failure(
                        Problem(
                            message:
                                "interval \(format(s)) s is out of range; valid: interval:SECONDS with SECONDS in \(format(bounds.lowerBound))…\(format(bounds.upperBound))"
                        ))
                }
                return .success(.interval(seconds: s))
            }
            return .failure(Problem(message: "\"\(elided(text))\" is not a trigger; valid: \(syntax)"))
        }
    }

    public var description: String {
        switch self {
        case .auto: "auto"
        case .keyboard: "keyboard"
        case .interval(let s): "interval:\(format(s))"
        case .bui: "bui"
        case .gpio: "gpio"
        }
    }
}

/// One stop of a stepped program: a pose for every axis, and how long to let it settle.
public struct Step: Sendable, Equatable {
    public var pose: [Double]
    public var settleSeconds: Double
    /// Where the step came from, for messages ("shot 3 (row 1, column 2)").
    public var label: String
    /// The step's own camera settings (a `steps` program's `"exposure"`), over the program's.
    public var exposure: Exposure?
    /// A stepped sky track's frame: where its target is when the frame is really shot
    /// (`Player`'s `trackSecondsAtStart`) overrides `pose` on the track's two axes; `pose`
    /// is where it is at the frame's planned time.
    public var aim: SkyTrack?

    public init(pose: [Double], settleSeconds: Double, label: String, exposure: Exposure? = nil, aim: SkyTrack? = nil) {
        self.pose = pose
        self.settleSeconds = settleSeconds
        self.label = label
        self.exposure = exposure
        self.aim = aim
    }
}

/// A program ready to play: a continuous keyframed path, or a list of steps.
public enum Motion: Sendable, Equatable {
    /// One track per axis (nil: the axis stays at home). Time in seconds.
    case continuous(tracks: [AxisTrack?], durationSeconds: Double)
    case stepped([Step])
}

/// A parsed program file.
public struct Program: Sendable, Equatable {
    public enum Kind: String, Sendable, Equatable, CaseIterable {
        case keyframes, steps, panorama, timelapse, track
    }

    public var file: String
    public var rig: Rig
    public var kind: Kind
    public var motion: Motion
    /// How a stepped program advances when the command line does not say.
    public var trigger: Trigger
    /// Press Stop in Cascable after the last step (trigger `bui`).
    public var stopRecipeAtEnd: Bool
    /// The panorama's plan, for `rig plan`.
    public var panorama: PanoramaPlan?
    /// What the panorama was planned from, to replan it from another start pose.
    public var panoramaSpec: PanoramaSpec?
    /// The program-wide settle time of stepped programs.
    public var settleSeconds: Double
    /// How each shot is taken with the rig's camera (`"shoot"`).
    public var shoot = ShootConfig()
    /// Where the rig stands (the program's `"site"`, else the rig's).
    public var site: Site?
    /// A track program's target, start and mount, for `rig plan`.
    public var track: SkyTrack?
    /// When the program starts on the clock (`"start"`); nil: when it is played.
    public var start: ProgramStart?
    /// A timelapse's ramped interval (`intervalKeys`): the interval after each frame's shot.
    public var stepIntervals: [Double]?

    /// The timing of one shot with this rig's camera; nil when the rig has none.
    public var shotTiming: ShotTiming? {
        rig.camera.map { ShotTiming(camera: $0, shoot: shoot) }
    }

    /// Each step's frames' exposures in seconds, in shooting order, as the camera will be
    /// set for them: a step's own exposure over the program's, a bracket's offsets (the
    /// normal frame, then −1, +1, … steps), a ramp's planned exposure at that frame (an
    /// `auto` ramp can go anywhere: its longest). A frame whose shutter the program does
    /// not set takes `shoot.exposureSeconds`. The time into the run that a sun ramp reads
    /// is the sum of `trigger`'s intervals before the step (0 unpaced). nil for a
    /// continuous program or a rig without a camera.
    public func frameExposureSeconds(trigger: Trigger) -> [[Double]]? {
        guard rig.camera != nil, case .stepped(let steps) = motion else { return nil }
        var paced = ShootingPlan()
        paced.pace(by: trigger, stepIntervals: stepIntervals)
        var seconds = 0.0
        var frames: [[Double]] = []
        frames.reserveCapacity(steps.count)
        for (index, step) in steps.enumerated() {
            if index > 0 { seconds += paced.interval(after: index - 1) ?? 0 }
            if let ramp = shoot.ramp {
                let shutter = ramp.plannedEV(frame: index, seconds: seconds).map { ramp.limits.settings(forEV: $0).shutterSeconds }
                frames.append(Array(repeating: shutter ?? ramp.longestShutterSeconds, count: shoot.shotsPerStep))
                continue
            }
            let exposure = step.exposure.map { $0.over(shoot.exposure) } ?? shoot.exposure
            guard let base = exposure?.shutter.flatMap(ShutterSpeed.seconds) else {
                frames.append(Array(repeating: shoot.exposureSeconds, count: shoot.shotsPerStep))
                continue
            }
            if let bracket = shoot.bracket {
                frames.append(bracket.offsetsEV.map { base * pow(2, $0) })
            } else {
                frames.append(Array(repeating: base, count: shoot.shotsPerStep))
            }
        }
        return frames
    }

    /// How the program's shots are taken with `timing` (nil: no camera on this run), for
    /// `rig play`, `rig check` and `rig serve` alike: the timing and each frame's own
    /// exposure (`frameExposureSeconds`, timed by `trigger`'s interval). Pacing a stepped
    /// program by the trigger is the caller's (`ShootingPlan.pace`).
    public func shootingPlan(timing: ShotTiming?, selfTimed: Bool = true, trigger: Trigger) -> ShootingPlan {
        var plan = ShootingPlan(timing: timing, selfTimed: selfTimed, frameExposureSeconds: timing == nil ? nil : frameExposureSeconds(trigger: trigger))
        plan.measuredSettle = rig.settle
        return plan
    }

    /// The same program for a rig starting at `pose`: a panorama's serpentine order
    /// starts at the corner nearest it. Other kinds do not depend on the start.
    public func startingFrom(_ pose: [Double]) -> Program {
        guard let spec = panoramaSpec else { return self }
        var copy = self
        let plan = PanoramaPlanner.plan(spec, currentPan: pose[spec.panAxis], currentTilt: pose[spec.tiltAxis])
        copy.panorama = plan
        copy.motion = .stepped(ProgramParser.steps(for: plan, spec: spec, rig: rig, settle: settleSeconds))
        return copy
    }

    public var isStepped: Bool {
        if case .stepped = motion { return true }
        return false
    }

    public var steps: [Step] {
        if case .stepped(let steps) = motion { return steps }
        return []
    }

    /// Frames a stepped program shoots: each step's `shotsPerStep` (a bracket's count); 0
    /// when the rig has no camera.
    public var frameCount: Int {
        rig.camera == nil ? 0 : steps.count * shoot.shotsPerStep
    }
}
