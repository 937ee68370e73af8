import Foundation

/// Runs the `rig` binary built next to the test bundle.
public struct RigProcess {
    public struct Result: Sendable {
        public var status: Int32
        public var stdout: String
        public var stderr: String

        public init(status: Int32, stdout: String, stderr: String) {
            self.status = status
            self.stdout = stdout
            self.stderr = stderr
        }
    }

    public static var packageRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    /// The `rig` binary built beside the test bundle.
    public static var executable: URL { TestTools.rigExecutable }

    /// Starts `rig` (or `program`, such as a shell that runs rig) with `arguments` in the
    /// package root.
    public static func start(_ arguments: [String], program: URL = executable, environment: [String: String]? = nil) throws -> (TestProcess, Pipe, Pipe) {
        let process = TestProcess()
        process.executableURL = program
        process.arguments = arguments
        if let environment { process.environment = environment }
        process.currentDirectoryURL = packageRoot
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        return (process, out, err)
    }

    public static func run(_ arguments: [String], program: URL = executable, environment: [String: String]? = nil) throws -> Result {
        let (process, out, err) = try start(arguments, program: program, environment: environment)
        // Read both pipes to the end before waiting, so a full pipe cannot stall rig.
        let errText = PipeCollector(err)
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        errText.waitForEnd()
        process.waitUntilExit()
        return Result(status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self), stderr: errText.text)
    }

    public static func temporaryFile(_ name: String, contents: String? = nil) throws -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("rig-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let path = dir.appendingPathComponent(name).path
        if let contents { try contents.write(toFile: path, atomically: true, encoding: .utf8) }
        return path
    }
}
