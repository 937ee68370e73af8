import Foundation
import Glibc

/// `rig` with a pseudo-terminal on stdin (the keyboard trigger needs one) and its
/// stdout and stderr collected as they come, for tests that answer its prompts.
final class TerminalProcess: @unchecked Sendable {
    final class Collected: @unchecked Sendable {
        private let lock = NSLock()
        private var text = ""
        func append(_ data: Data) {
            lock.lock()
            text += String(decoding: data, as: UTF8.self)
            lock.unlock()
        }
        var value: String {
            lock.lock()
            defer { lock.unlock() }
            return text
        }
        func count(_ needle: String) -> Int { value.components(separatedBy: needle).count - 1 }
    }

    let process = Process()
    let terminal: FileHandle
    let stdout = Collected()
    let stderr = Collected()

    struct NoTerminal: Error {}

    init(_ arguments: [String]) throws {
        var master: Int32 = -1
        var slave: Int32 = -1
        guard openpty(&master, &slave, nil, nil, nil) == 0 else { throw NoTerminal() }
        terminal = FileHandle(fileDescriptor: master, closeOnDealloc: true)
        process.executableURL = RigProcess.executable
        process.arguments = arguments
        process.currentDirectoryURL = RigProcess.packageRoot
        let out = Pipe()
        let err = Pipe()
        process.standardInput = FileHandle(fileDescriptor: slave, closeOnDealloc: true)
        process.standardOutput = out
        process.standardError = err
        out.fileHandleForReading.readabilityHandler = { [stdout] in stdout.append($0.availableData) }
        err.fileHandleForReading.readabilityHandler = { [stderr] in stderr.append($0.availableData) }
        try process.run()
    }

    /// Types `keys` on the terminal (raw mode: Enter is "\r").
    func type(_ keys: String) { terminal.write(Data(keys.utf8)) }
}
