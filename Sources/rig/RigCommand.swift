import ArgumentParser
import FoundationEssentials
import Glibc
import RigRuntime

@main
struct RigCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rig",
        abstract: "Motion-rig controller: keyframed pan/tilt/slider moves, panoramas and timelapses on hobby servos.",
        discussion: """
            With no hardware, rigs use the built-in simulated output. Exit codes: 0 done, \
            1 infeasible program or runtime fault, 2 malformed file or usage error.
            """,
        version: RigVersion.current,
        subcommands: [
            PlayCommand.self,
            FollowCommand.self,
            CheckCommand.self,
            PlanCommand.self,
            ExportCommand.self,
            PlotCommand.self,
            ProbeCommand.self,
            DoctorCommand.self,
            CameraCommand.self,
            CalibrateCommand.self,
            JogCommand.self,
            ScanCommand.self,
            PairCommand.self,
            BenchCommand.self,
            ServeCommand.self,
        ]
    )

    /// Runs the command; usage errors exit 2 (as malformed files do), not sysexits' 64.
    static func main() {
        // Signals are caught from the first instruction (SignalTrap): a run is stopped the
        // documented way however early it is signalled. SIGPIPE is ignored: every write to
        // stdout/stderr goes through StandardStreams, which turns a reader that went away
        // (EPIPE) into an orderly stop; the default SIGPIPE would kill the process mid-move.
        StandardStreams.holdClosedDescriptors()
        SignalTrap.installProcessWide(runsRig: ["play", "follow", "serve", "jog"].contains(CommandLine.arguments.dropFirst().first ?? ""))
        do {
            var command = try parseAsRoot()
            try command.run()
        } catch {
            if exitCode(for: error) == .validationFailure {
                printError(fullMessage(for: error))
                Glibc.exit(2)
            }
            exit(withError: error)
        }
    }
}
