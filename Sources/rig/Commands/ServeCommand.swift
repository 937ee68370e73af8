import ArgumentParser

/// `rig serve`: the rig as a server. `rig serve` alone is `rig serve http` (the phone page
/// and JSON API); `rig serve dfmoco` is Dragonframe's DFMoco bridge.
struct ServeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Drive the rig from a phone, a browser or another program (default: http).",
        subcommands: [ServeHTTPCommand.self, ServeDFMocoCommand.self],
        defaultSubcommand: ServeHTTPCommand.self
    )
}
