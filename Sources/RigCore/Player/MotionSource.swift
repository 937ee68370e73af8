/// What the control loop plays each tick: a program (`Player`) or a jog session.
/// Used only on the loop thread; other threads reach it through the loop's requests.
public protocol MotionSource: SendableMetatype {
    /// Computes the next tick's pose into `positions`; returns what happened, if anything.
    mutating func tick(into positions: inout [Double]) -> PlayerEvent?
    /// The trigger fired: go on to the next step.
    mutating func advance()
    /// Stop soon: brake within the limits, park, finish.
    mutating func stop()
    /// The loop stalled long while the rig moved: the rig has stood still where the last
    /// frame put it. Stop what moves from rest there (no braking from a speed it no longer
    /// has; a program then parks within the limits). Returns true when the source is now
    /// ending (as after `stop()`), false when it only halted and goes on taking commands.
    /// Default: `stop()`, ending.
    mutating func stallStop() -> Bool
    /// The camera finished the shot the source asked for.
    mutating func shotDone()
    /// The loop's stillness probe (a measured settle) says whether the head is still now;
    /// called every tick when the run measures stillness. Default: ignored.
    mutating func measured(still: Bool)
    /// Shoot the current step again.
    mutating func redo()
    /// Go to step `step` (0-based) and shoot it.
    mutating func goTo(step: Int)
    /// Go to the rig's home pose between steps (see `Player.goHome()`).
    mutating func goHome()
    /// Rejoin a group's keyframes path part-way (see `Player.rejoin(pathSeconds:framesShot:)`).
    mutating func rejoin(pathSeconds: Double, framesShot: Int?)
    /// A motion command or a program request from the loop's mailbox; a source that takes
    /// none ignores it.
    mutating func receive(_ request: SourceRequest)
    var isFinished: Bool { get }
    /// The axis the source's own limiter had to bend in the frame it just emitted for a
    /// program (which `check` accepted, so it never should), nil otherwise. The loop
    /// treats it as its own limiter's verdict: it reports it and, for `rig play`, stops.
    /// Commands (jog) that rely on the limiter report nil. Default: nil.
    var limitedAxis: Int? { get }
    /// What a program host did since the last call (programs started, requests refused,
    /// programs ended), oldest first; nil when nothing more. Called on the loop thread after
    /// each tick: must not allocate. Default: nil (a source that hosts no programs).
    mutating func takeHostEvent() -> HostEvent?
    /// Where the timeline is, for the live view.
    var progress: PlaybackProgress { get }
    /// The frames of the planned move under way, if the source knows them (a program's
    /// step, its way home): returns the ticks from now until its frames stop changing (the
    /// next `tick` is tick 1), and leaves the last `window` of those ticks' frames in `rows`
    /// (tick `k` at row `(k − 1) % window`, one column per axis; `rows` holds `window` ×
    /// axes). 0: no planned move (jog, a path). For the outputs' one-count trim
    /// (`CountTrim`); called when a move starts. Default: 0.
    func framesAhead(into rows: inout [Double], window: Int) -> Int
}

/// What a motion source is doing, typed from the source to whoever shows it: the live
/// view and the LCD print `description`, `rig serve` maps it to its API states.
public enum ProgressPhase: Sendable, Equatable, CustomStringConvertible {
    /// Before anything (a player's first look).
    case ready
    // Motion commands.
    case idle, jogging, braking, settling, moving, following, parking, finished
    // A program.
    case leadIn, playing, shooting, waiting, goingHome, settlingAtHome, atHome
    // A program the host holds (`rig serve`'s pause); a jog session winding down.
    case paused, stopping
    /// Jog mode's own states.
    case jog(Jog)

    public enum Jog: Sendable, Equatable {
        case heldNoInput, fine, normal, coarse, nudge, preview, movingHome
    }

    public var description: String {
        switch self {
        case .ready: "ready"
        case .idle: "idle"
        case .jogging: "jogging"
        case .braking: "braking"
        case .settling: "settling"
        case .moving: "moving"
        case .following: "following"
        case .parking: "parking"
        case .finished: "finished"
        case .leadIn: "lead-in"
        case .playing: "playing"
        case .shooting: "shooting"
        case .waiting: "waiting"
        case .goingHome: "going home"
        case .settlingAtHome: "settling at home"
        case .atHome: "at home"
        case .paused: "paused"
        case .stopping: "stopping"
        case .jog(.heldNoInput): "held: no input"
        case .jog(.fine): "jog (fine)"
        case .jog(.normal): "jog (normal)"
        case .jog(.coarse): "jog (coarse)"
        case .jog(.nudge): "nudge"
        case .jog(.preview): "preview"
        case .jog(.movingHome): "moving home"
        }
    }
}

/// Where a motion source is, for the live view and logs.
public struct PlaybackProgress: Sendable, Equatable {
    public var elapsedSeconds: Double
    /// Total expected seconds for continuous programs (nil for stepped/jog).
    public var totalSeconds: Double?
    /// 1-based step and step count for stepped programs.
    public var step: Int?
    public var stepCount: Int?
    public var phase: ProgressPhase
    /// A program is playing (the program host's player), whatever its phase: a move of a
    /// program is not a move the source was commanded.
    public var inProgram = false
    /// Program seconds a program held paused at a step (its clock runs on meanwhile): an
    /// estimate of the time left adds them.
    public var pausedSeconds = 0.0

    public init(elapsedSeconds: Double, totalSeconds: Double? = nil, step: Int? = nil, stepCount: Int? = nil, phase: ProgressPhase) {
        self.elapsedSeconds = elapsedSeconds
        self.totalSeconds = totalSeconds
        self.step = step
        self.stepCount = stepCount
        self.phase = phase
    }
}

extension MotionSource {
    /// Sources that take no pictures (jog) ignore the shot requests.
    public mutating func shotDone() {}
    public mutating func measured(still: Bool) {}
    public mutating func redo() {}
    public mutating func goTo(step: Int) {}
    public mutating func goHome() {}
    public mutating func rejoin(pathSeconds: Double, framesShot: Int?) {}
    public mutating func receive(_ request: SourceRequest) {}
    public var limitedAxis: Int? { nil }
    public mutating func takeHostEvent() -> HostEvent? { nil }
    public mutating func stallStop() -> Bool {
        stop()
        return true
    }
    public func framesAhead(into rows: inout [Double], window: Int) -> Int { 0 }
}

extension Player: MotionSource {
    /// The longest move `framesAhead` plays ahead, seconds (at 200 Hz, 2000 of the copy's ticks).
    public static let lookAheadSeconds = 10.0

    /// Plays a copy of the player ahead (it is a value, and deterministic) until the
    /// move's frames stop changing (its shaper's tail included); 0 for a lead-in that runs
    /// into its path, and for a move longer than `lookAheadSeconds` (the loop's tick waits
    /// for this: the trim then plans when its frames stop). Allocates (the copy's own
    /// arrays): once a move, not once a tick.
    public func framesAhead(into rows: inout [Double], window: Int) -> Int {
        switch phase {
        case .moving, .movingHome, .leadIn: break
        default: return 0
        }
        let n = emitted.count
        let limit = Int(Self.lookAheadSeconds / dt)
        // Each of these phases plays a planned move whose remaining ticks are known: one
        // longer than the look-ahead is not played ahead at all (it was played for 10 s
        // and dropped: 3.5 ms of a debug build's loop tick here).
        guard window > 0, rows.count >= window * n, move.ticks + arrivalTicks - moveTick <= limit else { return 0 }
        var ahead = self
        var frame = emitted
        var previous = emitted
        var arrival = 0
        var k = 0
        while k < limit {
            k += 1
            _ = ahead.tick(into: &frame)
            var changed = false
            for i in 0..<n where frame[i] != previous[i] { changed = true }
            if changed {
                // A lead-in that runs into its path does not come to rest.
                if case .path = ahead.phase { return 0 }
                arrival = k
                let row = (k - 1) % window
                for i in 0..<n {
                    rows[row * n + i] = frame[i]
                    previous[i] = frame[i]
                }
            } else {
                switch ahead.phase {
                case .moving, .movingHome, .leadIn: continue
                default: return arrival
                }
            }
        }
        return 0
    }

    public var progress: PlaybackProgress {
        var p = PlaybackProgress(elapsedSeconds: elapsedSeconds, phase: .ready)
        switch motion {
        case .continuous(_, let duration): p.totalSeconds = duration
        case .stepped(let steps): p.stepCount = steps.count
        }
        switch phase {
        case .leadIn: p.phase = .leadIn
        case .waitingToStart: p.phase = .waiting
        case .path: p.phase = .playing
        case .moving(let s):
            p.phase = .moving
            p.step = s + 1
        case .settling(let s):
            p.phase = .settling
            p.step = s + 1
        case .shooting(let s):
            p.phase = .shooting
            p.step = s + 1
        case .waiting(let s):
            p.phase = .waiting
            p.step = s + 1
        case .movingHome: p.phase = .goingHome
        case .settlingHome: p.phase = .settlingAtHome
        case .atHome: p.phase = .atHome
        case .braking: p.phase = .braking
        case .parking: p.phase = .parking
        case .finished: p.phase = .finished
        }
        return p
    }
}
