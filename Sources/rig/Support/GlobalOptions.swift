import ArgumentParser
import Foundation
import Logging

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
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        var logger = Logger(label: label)
        logger.logLevel = level
        return logger
    }
}

/// Writes a line to stdout unbuffered, in order with the live view.
func say(_ text: String) {
    FileHandle.standardOutput.write(Data((text + "\n").utf8))
}

/// Writes to stderr.
func printError(_ text: String) {
    FileHandle.standardError.write(Data((text + "\n").utf8))
}
