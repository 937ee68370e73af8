import FoundationEssentials
import Glibc
import RigSky
import Synchronization

/// The keys of a run that no keyboard trigger reads (`auto`, `interval:S`): `+` and `-`
/// nudge the exposure ramp by a third of a stop, `q` stops (brake, park, safe state), as
/// the keyboard trigger's own keys do. Only on a terminal; the terminal is put back on
/// every way out.
public final class RampKeys: SessionPart, @unchecked Sendable {
    public let partName = "keys"
    private let nudge: RampNudge
    private let say: @Sendable (String) -> Void
    private let stopped = Atomic<Bool>(false)
    private let raw = Mutex<TerminalRawMode?>(nil)

    /// nil when stdin is not a terminal (nothing to read keys from).
    public init?(nudge: RampNudge, say: @escaping @Sendable (String) -> Void) {
        guard isatty(STDIN_FILENO) == 1 else { return nil }
        self.nudge = nudge
        self.say = say
    }

    public func start(_ door: SessionDoor) throws(PartStartFailure) {
        guard let terminal = TerminalRawMode() else { return }
        raw.withLock { $0 = terminal }
        say("keys: + brighter · - darker (a third of a stop on the ramp) · q stop")
        SystemThread.start(name: "rig-keys") { [self, nudge, say] in
            var reader = StepKeyReader()
            TerminalRawMode.readKeys(
                until: { stopped.load(ordering: .relaxed) },
                { byte in
                    switch reader.feed(byte) {
                    case .nudge(let delta)?: say(RampNudge.keyReply(nudge, by: delta))
                    case .stop?: door.stop()
                    default: break
                    }
                })
            terminal.restore()
        }
    }

    public func finish(_ outcome: SessionOutcome) {
        stopped.store(true, ordering: .relaxed)
        raw.withLock { $0 }?.restore()
    }
}
