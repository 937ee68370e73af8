import Logging
import RigCore
import RigGroup
import RigRuntime

/// `rig serve` leading a group (`--group NAME --followers a,b`): every program it plays
/// is played by the group, as `rig play --lead` plays one. One group link per program: it
/// connects when the program is posted, drives the steps (the program waits for it at
/// each one), fires the camera at the group's time, and ends with the program.
public struct GroupLeading: Sendable {
    public var settings: GroupSettings
    /// This rig's clock now (chrony), measured for each program.
    public var clock: @Sendable () -> ClockReport

    public init(settings: GroupSettings, clock: @escaping @Sendable () -> ClockReport) {
        self.settings = settings
        self.clock = clock
    }
}

extension RigConsole {
    /// The program as a group plays it: stepped, its steps wait for the group link (no
    /// trigger of their own, no move to the first step until the group says, no shot on
    /// arrival: the link fires each at the group's time); keyframes, it holds at its first
    /// key until the group's start. 422 for a program a group cannot play.
    func groupProgram(_ program: HostedProgram) throws(ServeError) -> HostedProgram {
        if let timing = program.shooting.timing, timing.shotsPerStep > 1 {
            throw ServeError(
                .unprocessableContent,
                "\(program.name): in a group each rig takes one frame per step at the group's time; this program takes \(timing.shotsPerStep) (a bracket or shotsPerStep); nothing moved"
            )
        }
        var grouped = program
        grouped.trigger = .keyboard
        if program.stepCount > 0 {
            grouped.moveToFirstStep = false
            grouped.shots?.timing = nil
            grouped.shots?.intervalSeconds = nil
        } else {
            grouped.holdsBeforePath = true
        }
        return grouped
    }

    /// The group link for `program`, in place before the program is posted (it hears every
    /// event of the program) and started on the session's event thread once the host says
    /// the program took the rig (its moves then follow the program in the mailbox);
    /// `shots` fires the camera at the group's times.
    func prepareGroupLink(_ leading: GroupLeading, program: HostedProgram, original: HostedProgram, sha: String, shots: ShotRunner?) {
        var settings = leading.settings
        settings.sha = sha
        settings.firstStep = program.firstStep
        let paced = original.shooting
        settings.intervalSeconds = paced.intervalSeconds
        settings.stepIntervals = paced.stepIntervals
        let steps: [Step] = if case .stepped(let s) = program.motion { s } else { [] }
        let link = GroupLink(
            settings: settings, steps: steps, axisNames: rig.axes.map(\.name), runner: shots, logger: logger, clock: leading.clock(),
            keyframes: steps.isEmpty)
        // A keyframes path on the group's clock, as `rig play --lead` plays one.
        if steps.isEmpty, let groupTimeline, let peaks = PathPeaks(motion: program.motion, axisCount: rig.axes.count, tickSeconds: rig.tickSeconds) {
            groupTimeline.arm(peaks)
            link.attachTimeline(groupTimeline, axes: rig.axes, tickSeconds: rig.tickSeconds)
        }
        let mailbox = self.mailbox
        let door = SessionDoor(
            mailbox: mailbox, stop: { mailbox.post(.stop) }, stepCount: steps.count, pose: { [weak self] in self?.loopStatus?.positions })
        groupLink.withLock { $0 = PendingLink(link: link, door: door) }
    }

    /// Loop events for the program's group link (event thread): started with the program,
    /// dropped when the host refused it, ended with it.
    func groupHandle(_ event: LoopEvent) {
        guard let pending = groupLink.withLock({ $0 }) else { return }
        let link = pending.link
        if case .host(let done, _) = event {
            switch done {
            case .started where !pending.started:
                pending.started = true
                do throws(PartStartFailure) { try link.start(pending.door) } catch {
                    logger.error("group \(link.settings.group): \(error); the program waits until the broker answers")
                }
                // The player's events of the tick that took the program come before the
                // host's `started` (a keyframes path already at its first key is ready at
                // once): the link hears them now, or it would wait for ever.
                for early in pending.early { link.handle(early) }
                pending.early = []
            case .refused(.play, _) where !pending.started:
                link.close()
                groupLink.withLock { if $0 === pending { $0 = nil } }
                return
            default: break
            }
        }
        guard pending.started else {
            if case .player = event { pending.early.append(event) }
            return
        }
        link.handle(event)
        if case .player(.programEnded(let stopped), _) = event {
            link.end(stoppedHere: stopped)
            groupLink.withLock { if $0 === pending { $0 = nil } }
            lastGroup.withLock { $0 = link.snapshot }
        }
    }

    /// The link's turn on the session's event thread.
    func groupPoll() {
        guard let pending = groupLink.withLock({ $0 }), pending.started else { return }
        pending.link.poll()
        changed()
    }

    /// The group as the status shows it: the playing program's link, else the last one.
    var groupStatus: GroupSnapshot? {
        if let pending = groupLink.withLock({ $0 }) { return pending.link.snapshot ?? lastGroup.withLock { $0 } }
        return lastGroup.withLock { $0 }
    }

    /// The session's end with a program's link still there.
    func groupFinish(_ outcome: SessionOutcome) {
        guard let pending = groupLink.withLock({ $0 }) else { return }
        if pending.started { pending.link.finish(outcome) } else { pending.link.close() }
    }
}

/// A program's group link and the door it starts with; `started` on the event thread only.
final class PendingLink: @unchecked Sendable {
    let link: GroupLink
    let door: SessionDoor
    var started = false
    /// The program's player events before the host said it started (event thread only).
    var early: [LoopEvent] = []
    init(link: GroupLink, door: SessionDoor) {
        self.link = link
        self.door = door
    }
}
