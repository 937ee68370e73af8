import Foundation
import Glibc
import RigTestSupport

/// `rig` with a pseudo-terminal on stdin (the keyboard trigger needs one) and its
/// stdout and stderr collected as they come, for tests that answer its prompts.
final class TerminalProcess: @unchecked Sendable {
    let process = TestProcess()
    let terminal: FileHandle
    let stdout: PipeCollector
    let stderr: PipeCollector

    struct NoTerminal: Error {}

    init(_ arguments: [String], environment: [String: String]? = nil) throws {
        var master: Int32 = -1
        var slave: Int32 = -1
        guard openpty(&master, &slave, nil, nil, nil) == 0 else { throw NoTerminal() }
        terminal = FileHandle(fileDescriptor: master, closeOnDealloc: true)
        process.executableURL = RigProcess.executable
        process.arguments = arguments
        if let environment { process.environment = environment }
        process.currentDirectoryURL = RigProcess.packageRoot
        let out = Pipe()
        let err = Pipe()
        process.standardInput = FileHandle(fileDescriptor: slave, closeOnDealloc: true)
        process.standardOutput = out
        process.standardError = err
        // Read on threads of their own, not through `readabilityHandler`: its dispatch
        // source outlived the pipe at the end of a test and crashed libdispatch's event loop.
        try process.run()
        stdout = PipeCollector(out)
        stderr = PipeCollector(err)
    }

    /// Types `keys` on the terminal (raw mode: Enter is "\r").
    func type(_ keys: String) { terminal.write(Data(keys.utf8)) }
}
