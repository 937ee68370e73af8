import ArgumentParser
import RigGroup

struct FollowCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "follow",
        abstract:
            "Follow a group's leader over MQTT: play this rig's program (step by step, or a keyframes path from the group's start) on the group's timeline.",
        discussion: """
            The rig moves only when the group's leader says where (its retained state), reports \
            "armed" once settled, and fires each step's shot at the leader's time from its own \
            timer. Orders that are expired, out of order, from another group or not from the \
            leader are ignored. A STOP from any rig of the group brakes and parks this one; \
            Ctrl-C here stops the group. See docs/multi-rig.md.
            """
    )

    @Argument(help: "This rig's program (.json): stepped, with as many steps as the leader's, or keyframes.")
    var program: String

    @Option(help: ArgumentHelp("The group's MQTT broker (mqtt://HOST:PORT or mqtts://…); default: the rig file's \"group\" broker.", valueName: "url"))
    var broker: String?

    @Option(help: ArgumentHelp("The group's name.", valueName: "name"))
    var group: String

    @Option(help: ArgumentHelp("This rig's name in the group (default: the rig's name).", valueName: "name"))
    var name: String?

    @Option(help: ArgumentHelp("Follow only this leader (default: the first leader of the group seen).", valueName: "name"))
    var leader: String?

    @Option(
        help: ArgumentHelp(
            "Broker user, password and TLS CA: a JSON file only you may read (chmod 600); default: the rig file's \"group\" credentials.",
            valueName: "file"))
    var credentials: String?

    @Flag(help: "Do not ask for SCHED_FIFO and locked memory.")
    var noRealtime = false

    @Option(help: ArgumentHelp("Shot log of this rig's steps (JSON Lines).", valueName: "file.jsonl"))
    var log: String?

    @Option(help: ArgumentHelp("Write every emitted frame as CSV, as `rig play --trace` does.", valueName: "file.csv"))
    var trace: String?

    @Option(
        help: ArgumentHelp(
            "A keyframes program: shoot on the move every SECONDS of its path from the group's start, as `rig play --interval` does.",
            valueName: "seconds"))
    var interval: Double?

    @Flag(name: .shortAndLong, help: "Log more (debug level).")
    var verbose = false

    func run() throws {
        var arguments = [program]
        if noRealtime { arguments.append("--no-realtime") }
        if verbose { arguments.append("--verbose") }
        if let log { arguments += ["--log", log] }
        if let trace { arguments += ["--trace", trace] }
        if let interval { arguments += ["--interval", "\(interval)"] }
        let play = try PlayCommand.parse(arguments)
        try play.play(group: GroupRequest(broker: broker, group: group, name: name, role: .follower(leader: leader), credentials: credentials))
    }
}
