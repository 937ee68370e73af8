/// The program host: the one motion source that plays programs, for `rig play` and `rig
/// serve` alike. It is either taking motion commands (idle, jogging, going to a pose: its
/// `CommandSource`) or playing a program (a `Player` with its shot plan), switching only at
/// rest. Every frame of either goes through the `CommandSource`'s limiter, so a program
/// hands over to jogging (and back) from exactly where it left the rig. `rig play` hosts
/// one program and ends with it (`endsWithProgram`); `rig serve` plays one after another.
///
/// Runs on the loop thread; other threads post motion commands and program requests (play,
/// next, back, …) to the loop's `SourceMailbox`, which hands them over at the start of
/// every tick. Motion commands that arrive while a program plays are dropped (counted in
/// `droppedCommands`): the server refuses them first.
/// `stop()` (a signal, the session's end) stops the program if any, then parks and finishes.
public struct ProgramHost: MotionSource {
    public let rig: Rig
    public private(set) var commands: CommandSource
    public private(set) var player: Player?
    /// The program playing, if any.
    public private(set) var program: HostedProgram?
    /// Stepped programs: advancing by itself is held (`.pause`).
    public private(set) var isPaused = false
    /// Requests that did not apply (a play while busy, a back while not waiting, …).
    public private(set) var refusedRequests = 0
    /// Motion commands dropped because a program was playing.
    public private(set) var droppedCommands = 0
    /// Programs started since the source began (a new play, not a back or redo).
    public private(set) var programsStarted = 0
    /// Programs whose player the tick had to build (none came prepared from the rest pose):
    /// the loop allocated for them.
    public private(set) var playersBuiltInTick = 0
    /// The source is over when its program is (`rig play`), instead of going back to
    /// taking commands (`rig serve`).
    public let endsWithProgram: Bool
    /// `endsWithProgram`, and the program is over and parked.
    private var programOver = false
    /// The axis the limiter had to bend in the program's last frame (see
    /// `MotionSource.limitedAxis`); the program is stopped on it.
    public private(set) var limitedAxis: Int?

    /// A `.next` was applied during the current wait (cleared when the wait ends).
    private var nextTaken = false
    private var stopRequested = false
    /// `stop()` came while a program played: its end was reported already, so the command
    /// source's own "stopped" (it parks after the program) is not reported twice.
    private var programEndReported = false
    /// Why the program playing will end, if something stopped it (else it completes).
    private var endCause: ProgramEnd?
    /// Program seconds spent paused at a step (the player's clock runs on while it holds).
    private var pausedSeconds = 0.0
    /// What the host did since the loop last took its events (`takeHostEvent()`): kept
    /// within its reserved capacity, so the loop thread never allocates for it.
    private var hostEvents: [HostEvent] = []
    /// Events that did not fit (a flood of refused requests in one tick).
    public private(set) var hostEventsDropped = 0
    private static let hostEventCapacity = 16

    /// - Parameters:
    ///   - startPose: where the rig is (one value per axis).
    ///   - jogTimeoutSeconds: the jog deadman (see `CommandSource`).
    ///   - program: a program to play from the start (built here, off the loop thread).
    ///   - endsWithProgram: the source finishes when that program does (`rig play`).
    public init(
        rig: Rig, startPose: [Double], jogTimeoutSeconds: Double = 0.25, program: HostedProgram? = nil, endsWithProgram: Bool = false
    ) {
        self.rig = rig
        self.endsWithProgram = endsWithProgram
        commands = CommandSource(rig: rig, startPose: startPose, jogTimeoutSeconds: jogTimeoutSeconds)
        hostEvents.reserveCapacity(Self.hostEventCapacity)
        if var program {
            program.prepared = nil
            player = program.player(rig: rig, from: startPose)
            self.program = program
            programsStarted = 1
            report(.started(program: program.name, steps: program.stepCount))
        }
    }

    /// The pose of the last emitted frame.
    public var positions: [Double] { commands.positions }
    /// Velocities of the last emitted frame, per second.
    public var velocities: [Double] { commands.velocities }

    /// 0-based program step the player is at (moving to, settling, waiting), if any.
    public var currentStep: Int? {
        guard let player else { return nil }
        switch player.phase {
        case .moving(let s), .settling(let s), .shooting(let s), .waiting(let s): return s >= 0 ? s : nil
        default: return nil
        }
    }

    /// The program waits at a step for `.next` (or its interval).
    public var isWaiting: Bool {
        if case .waiting(let s) = player?.phase, s >= 0 { return true }
        return false
    }

    public var isFinished: Bool { programOver || (stopRequested && player == nil && commands.isFinished) }

    /// A step trigger fired (`SourceRequest.advance`): kept until the rig is ready, unlike
    /// the operator's `.next`, which counts only during a wait.
    public mutating func advance() { player?.advance() }

    /// A trigger's controls (keyboard `r`, `g N`, `h`; Cascable `rig:` messages), for the
    /// program playing.
    public mutating func redo() { player?.redo() }
    public mutating func goTo(step: Int) { player?.goTo(step: step) }
    public mutating func goHome() { player?.goHome() }
    public mutating func rejoin(pathSeconds: Double, framesShot: Int?) { player?.rejoin(pathSeconds: pathSeconds, framesShot: framesShot) }

    public mutating func stop() {
        guard !stopRequested else { return }
        stopRequested = true
        programEndReported = player != nil
        if player != nil, endCause == nil { endCause = .stopped }
        player?.stop()
        commands.stop()
    }

    /// The command source's progress, or the program's own (its typed phase, `.paused`
    /// while held), marked `inProgram`.
    public var progress: PlaybackProgress {
        guard let player else { return commands.progress }
        var p = player.progress
        p.inProgram = true
        if isPaused, !player.phase.isStopping { p.phase = .paused }
        p.pausedSeconds = pausedSeconds
        return p
    }

    /// The program's planned move under way, ahead (`Player.framesAhead`); 0 for commands.
    public func framesAhead(into rows: inout [Double], window: Int) -> Int {
        player?.framesAhead(into: &rows, window: window) ?? 0
    }

    /// The rig stood still through a stall: a program stops from rest and parks; a jog
    /// or move halts. The server goes on (false) unless it was stopping already.
    public mutating func stallStop() -> Bool {
        let ending = commands.stallStop()
        guard player != nil else { return ending }
        if endCause == nil { endCause = .stalled }
        _ = player?.stallStop()
        // A hosted program stops from rest; with it the source ends (`rig play`).
        return ending || endsWithProgram
    }

    // MARK: For a source that owns the host on the loop thread (`rig jog`)

    /// A motion command now (what the mailbox would bring next tick); dropped while a
    /// program plays.
    public mutating func apply(_ command: MotionCommand) {
        guard player == nil else {
            droppedCommands += 1
            return
        }
        commands.apply(command)
    }

    /// Plays `program` now from where the rig rests, as a `.play` request would; false if
    /// the rig is not at rest or a program plays.
    @discardableResult
    public mutating func play(_ program: HostedProgram) -> Bool {
        apply(.play(program))
        return self.program != nil
    }

    /// Stops the program playing (brake; then it ends where it stands, or parks), as a
    /// `.stop` request would.
    public mutating func stopProgram() { apply(.stop) }

    /// The next thing the host did, oldest first (the loop reports each as a `LoopEvent`).
    public mutating func takeHostEvent() -> HostEvent? {
        hostEvents.isEmpty ? nil : hostEvents.removeFirst()
    }

    private mutating func report(_ event: HostEvent) {
        guard hostEvents.count < Self.hostEventCapacity else {
            hostEventsDropped += 1
            return
        }
        hostEvents.append(event)
    }

    private mutating func refuse(_ request: ProgramRequest, _ why: HostRefusal) {
        refusedRequests += 1
        report(.refused(request.kind, why))
    }

    /// The program is over and parked: said once, with how it ended.
    private mutating func reportEnd() {
        report(.ended(program: program?.name ?? "", endCause ?? .completed))
        endCause = nil
    }

    /// The command source's state (jogging, moving, at rest), while no program plays.
    public var commandMode: CommandSource.Mode { commands.mode }
    public var isAtRest: Bool { player == nil && commands.isAtRest }

    /// The camera reported the shot done (a camera that reports; the simulator's are timed).
    public mutating func shotDone() {
        player?.shotDone()
    }

    /// The loop's stillness probe, for a program's measured settle.
    public mutating func measured(still: Bool) {
        player?.measured(still: still)
    }

    /// A motion command (dropped while a program plays) or a program request from the
    /// loop's mailbox.
    public mutating func receive(_ request: SourceRequest) {
        switch request {
        case .motion(let command): apply(command)
        case .program(let request): apply(request)
        default: break
        }
    }

    public mutating func tick(into out: inout [Double]) -> PlayerEvent? {
        limitedAxis = nil
        guard player != nil else {
            let event = commands.tick(into: &out)
            if programEndReported, event == .programEnded(stopped: true) {
                programEndReported = false
                return nil
            }
            return event
        }
        return tickPlayer(into: &out)
    }

    private mutating func tickPlayer(into out: inout [Double]) -> PlayerEvent? {
        guard var p = player else { return nil }
        // Moved out (not copied) so its arrays stay uniquely owned: no copy per tick.
        player = nil
        let event = p.tick(into: &out)
        if !p.phase.isWaiting { nextTaken = false } else if isPaused { pausedSeconds += rig.tickSeconds }
        if let axis = commands.passThrough(&out) {
            // A frame the program should never have needed bent: it stops (brakes within the
            // limits from where the bent frame left the rig, then parks), whoever hosts it;
            // the loop reports the axis and `rig play` ends with the fault.
            limitedAxis = axis
            if endCause == nil { endCause = .limited(axis: axis) }
            if !p.phase.isStopping { p.stop(at: commands.positions, velocities: commands.velocities) }
        }
        // Auto and interval programs go on by themselves (the player paces an interval's
        // moves so the shots start S apart); held while paused.
        if case .ready? = event, advancesByItself, !isPaused { p.advance() }
        guard !p.isFinished else {
            if endsWithProgram {
                // The program was the source's whole job: it is done, `.finished` and all
                // (the finished player kept for the last progress).
                if !programOver { reportEnd() }
                programOver = true
                player = p
                return event
            }
            // The program is over and parked: back to commands. Its `.finished` is not
            // passed on: for the loop that means the whole source is done.
            player = nil
            commands.settleAfterProgram()
            reportEnd()
            program = nil
            isPaused = false
            return event == .finished ? nil : event
        }
        player = p
        return event
    }

    /// The program goes on without Next: `auto`, or `interval:S` (paced by the player).
    private var advancesByItself: Bool {
        switch program?.trigger {
        case .auto?, .interval?: true
        default: false
        }
    }

    private mutating func apply(_ request: ProgramRequest) {
        guard !stopRequested else {
            refuse(request, .stopping)
            return
        }
        switch request {
        case .play(let new):
            guard player == nil, commands.isAtRest else {
                refuse(request, .notAtRest)
                return
            }
            var new = new
            let prepared = new.prepared
            // Kept without its player: a second reference would make the player's first
            // change copy its arrays.
            new.prepared = nil
            program = new
            programsStarted += 1
            isPaused = false
            pausedSeconds = 0
            endCause = nil
            report(.started(program: new.name, steps: new.stepCount))
            if let prepared, prepared.startPose == commands.positions {
                // Built off the loop thread from this very pose: nothing to allocate here.
                player = prepared.player
            } else {
                playersBuiltInTick += 1
                // The program's own player (its start, its park), as `prepare` builds it.
                player = new.player(rig: rig, from: commands.positions)
            }
        case .next:
            // Only while waiting at a step, once per wait: a Next during a move (or a
            // second one before the first took effect) would skip a step's shot.
            guard player?.phase.isWaiting == true, !nextTaken else {
                refuse(request, player == nil ? .noProgram : nextTaken ? .nextAlreadyTaken : .notWaiting)
                return
            }
            nextTaken = true
            player?.advance()
        case .back:
            guard isWaiting, let step = currentStep, step >= 1 else {
                refuse(request, player == nil ? .noProgram : isWaiting ? .atFirstStep : .notWaiting)
                return
            }
            player?.goTo(step: step - 1)
        case .redo:
            guard isWaiting else {
                refuse(request, player == nil ? .noProgram : .notWaiting)
                return
            }
            player?.redo()
        case .pause:
            guard program?.stepCount ?? 0 > 0 else {
                refuse(request, player == nil ? .noProgram : .noSteps)
                return
            }
            isPaused = true
        case .resume:
            guard isPaused else {
                refuse(request, player == nil ? .noProgram : .notPaused)
                return
            }
            isPaused = false
            if isWaiting, advancesByItself { player?.advance() }
        case .stop:
            guard player != nil else {
                refuse(request, .noProgram)
                return
            }
            if endCause == nil { endCause = .stopped }
            player?.stop()
        }
    }
}
