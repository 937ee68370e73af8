import ArgumentParser
import FoundationEssentials
import Glibc
import Logging
import RigRuntime

/// Options every command that runs the rig shares.
struct LogOptions: ParsableArguments {
    @Flag(name: .shortAndLong, help: "Log more (debug level).")
    var verbose = false

    @Flag(name: .shortAndLong, help: "Log only warnings and errors.")
    var quiet = false

    /// Sets up swift-log once: to stderr, so stdout stays for results.
    func bootstrap(label: String = "rig") -> Logger {
        let level: Logger.Level = verbose ? .debug : quiet ? .warning : .info
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler(label: label, stream: StandardErrorStream())
            handler.logLevel = level
            return handler
        }
        var logger = Logger(label: label)
        logger.logLevel = level
        return logger
    }
}

/// Options of every command that runs a session on the rig (`play`, `serve`, `serve dfmoco`).
struct SessionRunOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Write every emitted frame as CSV: time_s,axis,channel,pulse_us,position_deg,wall_s,camera_deg.", valueName: "file.csv"))
    var trace: String?

    @Flag(help: "Do not ask for SCHED_FIFO and locked memory.")
    var noRealtime = false
}

/// Writes a line to stdout unbuffered, in order with the live view. A failed write never
/// traps: a running session hears of it and stops safely.
func say(_ text: String) {
    StandardStreams.out(text + "\n")
}

/// Writes a line to stderr (same guarantees as `say`).
func printError(_ text: String) {
    StandardStreams.err(text + "\n")
}
