/// What the operator asks of a running `ProgramHost` besides motion commands: programs
/// and their steps. Posted to the loop's `SourceMailbox`, applied at the start of a tick.
public enum ProgramRequest: Sendable, Equatable {
    /// Play a program (already checked by the caller). Refused (counted in
    /// `ProgramHost.refusedRequests`) unless the rig is at rest with no program.
    case play(HostedProgram)
    /// The operator's Next (the phone's button, `POST /api/next`): go on from the step the
    /// program waits at, only while it waits and once per wait (refused otherwise, so two
    /// taps never skip a step's shot). A step trigger's press is `SourceRequest.advance`.
    case next
    /// Move back to the previous step and wait there; only while waiting at a step.
    case back
    /// Shoot the current step again where the rig stands (it becomes ready once more);
    /// only while waiting.
    case redo
    /// Stepped programs: stop advancing by themselves after the current step.
    case pause
    case resume
    /// Brake, park, and go back to taking motion commands.
    case stop
}
