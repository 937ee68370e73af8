import ArgumentParser

/// `rig serve`: the rig as a server. The HTTP server (branch `serve`) and Dragonframe's
/// DFMoco bridge are its subcommands.
struct ServeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Drive the rig from another program.",
        subcommands: [ServeDFMocoCommand.self]
    )
}
