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

    /// The group link for `program` (posted already), connected and started as a part of
    /// the running session; `shots` fires the camera at the group's times.
    func startGroupLink(_ leading: GroupLeading, program: HostedProgram, original: HostedProgram, sha: String, shots: ShotRunner?) {
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
        let mailbox = self.mailbox
        let door = SessionDoor(
            mailbox: mailbox, stop: { mailbox.post(.stop) }, stepCount: steps.count, pose: { [weak self] in self?.loopStatus?.positions })
        do throws(PartStartFailure) {
            try link.start(door)
        } catch {
            logger.error("group \(settings.group): \(error); the program waits until the broker answers")
        }
        groupLink.withLock { $0 = link }
    }

    /// Loop events for the program's group link (event thread); it ends with the program.
    func groupHandle(_ event: LoopEvent) {
        guard let link = groupLink.withLock({ $0 }) else { return }
        link.handle(event)
        if case .player(.programEnded(let stopped), _) = event {
            link.end(stoppedHere: stopped)
            groupLink.withLock { if $0 === link { $0 = nil } }
            lastGroup.withLock { $0 = link.snapshot }
        }
    }

    /// The link's turn on the session's event thread.
    func groupPoll() {
        guard let link = groupLink.withLock({ $0 }) else { return }
        link.poll()
        changed()
    }

    /// The group as the status shows it: the playing program's link, else the last one.
    var groupStatus: GroupSnapshot? {
        if let link = groupLink.withLock({ $0 }) { return link.snapshot }
        return lastGroup.withLock { $0 }
    }
}
