import Foundation
import RigTestSupport

/// Runs the `rig` binary built next to the test bundle.
struct RigProcess {
    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    static var packageRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    /// The `rig` binary built beside the test bundle.
    static var executable: URL { TestTools.rigExecutable }

    /// Starts `rig` (or `program`, such as a shell that runs rig) with `arguments` in the
    /// package root.
    static func start(_ arguments: [String], program: URL = executable, environment: [String: String]? = nil) throws -> (Process, Pipe, Pipe) {
        let process = Process()
        process.executableURL = program
        process.arguments = arguments
        if let environment { process.environment = environment }
        process.currentDirectoryURL = packageRoot
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        return (process, out, err)
    }

    static func run(_ arguments: [String], program: URL = executable, environment: [String: String]? = nil) throws -> Result {
        let (process, out, err) = try start(arguments, program: program, environment: environment)
        // Read both pipes to the end before waiting, so a full pipe cannot stall rig.
        let errText = PipeCollector(err)
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        errText.waitForEnd()
        process.waitUntilExit()
        return Result(status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self), stderr: errText.text)
    }

    static func temporaryFile(_ name: String, contents: String? = nil) throws -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("rig-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let path = dir.appendingPathComponent(name).path
        if let contents { try contents.write(toFile: path, atomically: true, encoding: .utf8) }
        return path
    }
}

/// A parsed `--trace` CSV.
struct Trace {
    struct Row: Equatable {
        var time: Double
        var axis: String
        var channel: Int
        var pulse: Double
        var position: Double
        /// Wall-clock seconds since the loop began (the timeline pauses through a stall).
        var wall: Double
    }
    var header: String
    var rows: [Row]

    init(path: String) throws {
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map(String.init)
        header = lines.first ?? ""
        rows = lines.dropFirst().compactMap { line in
            let f = line.split(separator: ",").map(String.init)
            guard f.count == 6, let t = Double(f[0]), let c = Int(f[2]), let p = Double(f[3]), let x = Double(f[4]), let w = Double(f[5]) else {
                return nil
            }
            return Row(time: t, axis: f[1], channel: c, pulse: p, position: x, wall: w)
        }
    }

    /// Positions per tick, in axis order.
    func frames(axes: [String]) -> [[Double]] {
        var frames: [[Double]] = []
        var current: [Double] = []
        for row in rows {
            current.append(row.position)
            if current.count == axes.count {
                frames.append(current)
                current = []
            }
        }
        return frames
    }
}
