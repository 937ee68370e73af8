import Foundation

/// Where the tests find the package and the tools `scripts/setup --test` installs.
public enum TestTools {
    /// The package root (the folder holding Package.swift).
    public static let packageRoot: URL = {
        var url = URL(fileURLWithPath: #filePath)
        while url.path != "/" {
            url.deleteLastPathComponent()
            if FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path) { return url }
        }
        return URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
    }()

    /// The test virtualenv made by `scripts/setup --test`.
    public static var venv: URL { packageRoot.appendingPathComponent(".build-venv") }

    /// A program from the test virtualenv if it is there, else the name for PATH lookup
    /// (run through `/usr/bin/env`).
    public static func executable(_ name: String) -> (path: String, prefix: [String]) {
        let candidate = venv.appendingPathComponent("bin").appendingPathComponent(name).path
        if FileManager.default.isExecutableFile(atPath: candidate) { return (candidate, []) }
        return ("/usr/bin/env", [name])
    }

    /// A process for `name args…`, found as `executable(_:)` says.
    public static func process(_ name: String, _ arguments: [String]) -> TestProcess {
        let (path, prefix) = executable(name)
        let process = TestProcess()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = prefix + arguments
        return process
    }

    public static let setupHint = "run `scripts/setup --test` (it installs dbus and the Python test tools into .build-venv/)"
}

extension TestTools {
    /// The `rig` binary built next to the test bundle (swift test builds every product).
    public static var rigExecutable: URL {
        let bundle = Bundle.main.bundleURL
        for base in [bundle, bundle.deletingLastPathComponent()] {
            let candidate = base.appendingPathComponent("rig")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        return packageRoot.appendingPathComponent(".build/debug/rig")
    }

    /// A fresh temporary directory.
    public static func temporaryDirectory() throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("rig-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }
}

/// Runs a tool from the test venv (`TestTools.process`) in `directory` (its own files stay
/// there), its stdout and stderr together, bounded by `limit` (killed after it: status -1).
public func runTool(_ name: String, _ arguments: [String], in directory: URL, limit: Duration) async throws -> (status: Int32, output: String) {
    let process = TestTools.process(name, arguments)
    process.currentDirectoryURL = directory
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = pipe
    try process.run()
    let output = PipeCollector(pipe)
    do {
        let status = try await poll(every: .milliseconds(50), for: limit) { process.isRunning ? nil : process.terminationStatus }
        return (status, output.text)
    } catch {
        process.terminate()
        process.waitUntilExit()
        return (-1, output.text + "\n(killed after \(limit))")
    }
}
