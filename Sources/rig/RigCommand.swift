import ArgumentParser

@main
struct RigCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rig",
        abstract: "Motion-rig controller: keyframed pan/tilt/slider moves, panoramas and timelapses on hobby servos.",
        discussion: """
        With no hardware, rigs use the built-in simulated output. Exit codes: 0 done, \
        1 infeasible program or runtime fault, 2 malformed file or usage error.
        """,
        version: "0.1.0",
        subcommands: [
            PlayCommand.self,
            CheckCommand.self,
            PlanCommand.self,
            ProbeCommand.self,
            CalibrateCommand.self,
            JogCommand.self,
            ScanCommand.self,
        ]
    )
}
