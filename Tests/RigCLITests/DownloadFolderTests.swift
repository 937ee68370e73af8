import Foundation
import RigCore
import RigTestSupport
import Testing

/// A small tmpfs of the test's own: a download folder that fills up, or is read-only.
/// Mounting needs root (CI runs the tests as root); elsewhere the suite says why it did not run.
final class Tmpfs {
    let path: String

    static let available: Bool = {
        guard getuid() == 0, let dir = try? TestTools.temporaryDirectory() else { return false }
        guard (try? mount(dir.path, "size=16k")) == 0 else { return false }
        _ = try? run("/bin/umount", [dir.path])
        return true
    }()

    static let missing = "SKIPPED: mounting a small tmpfs needs root; the full and read-only download folders were NOT tested"

    /// Mounts a tmpfs of `options` (`size=16k`, `ro`) on a new folder.
    init(_ options: String) throws {
        path = try TestTools.temporaryDirectory().appendingPathComponent("tmpfs").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        guard try Self.mount(path, options) == 0 else { throw CocoaError(.fileWriteNoPermission) }
    }

    func remount(_ options: String) throws -> Int32 {
        try Self.run("/bin/mount", ["-o", "remount," + options, path])
    }

    /// Unmounts it (the test's `defer`).
    func unmount() {
        _ = try? Self.run("/bin/umount", [path])
    }

    private static func mount(_ path: String, _ options: String) throws -> Int32 {
        try run("/bin/mount", ["-t", "tmpfs", "-o", options, "tmpfs", path])
    }

    private static func run(_ tool: String, _ arguments: [String]) throws -> Int32 {
        let process = TestProcess()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus
    }
}

/// Frames copied into a download folder that fills up mid-run, and one that is read-only,
/// on libgphoto2's virtual camera: a `shot` event never names a copy that was not made.
@Suite(
    .serialized, .enabled(if: VirtualCamera.available, Comment(rawValue: VirtualCamera.missing)),
    .enabled(if: Tmpfs.available, Comment(rawValue: Tmpfs.missing)))
struct DownloadFolderTests {
    let dir: URL
    let environment: [String: String]

    init() throws {
        dir = try TestTools.temporaryDirectory()
        environment = VirtualCamera.environment(pictures: try VirtualCamera.pictures())
    }

    func write(_ name: String, _ text: String) throws -> String {
        let path = dir.appendingPathComponent(name).path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    func makeProgram(download: String, target: String, steps: Int) throws -> String {
        _ = try write(
            "rig.json",
            #"{"name": "gp", "loopRateHz": 50, "axes": [{"name": "pan", "channel": 0, "softLimits": [-80, 80]}], "camera": {"type": "gphoto2", "afterShotMs": 0, "confirmSeconds": 2, "captureTarget": "\#(target)", "download": "\#(download)"}}"#
        )
        let list = (0..<steps).map { #"{"pose": {"pan": \#($0 % 2 * 2)}}"# }.joined(separator: ",")
        return try write("p.json", #"{"rig": "rig.json", "kind": "steps", "trigger": "auto", "settleSeconds": 0.05, "steps": [\#(list)]}"#)
    }

    func rig(_ args: [String]) throws -> RigProcess.Result {
        try RigProcess.run(args, environment: environment)
    }

    func log(_ path: String) throws -> ShotLog {
        try ShotLog(text: String(contentsOfFile: path, encoding: .utf8), file: path)
    }

    /// Each file takes a 4 KiB page of a tmpfs: 16 KiB holds a frame or two and its preview.
    @Test(.blocking) func aFolderThatFillsKeepsTheFramesOnTheCardAndTheLogSaysWhere() throws {
        let folder = try Tmpfs("size=16k")
        defer { folder.unmount() }
        let program = try makeProgram(download: folder.path, target: "card", steps: 5)
        let logPath = dir.appendingPathComponent("card.jsonl").path
        let play = try rig(["play", program, "--log", logPath])
        #expect(play.status == 0, "\(play.stderr)")
        #expect(play.stderr.contains("has 0 MB free"), "warned before the run: \(play.stderr)")
        let log = try log(logPath)
        #expect(log.isFinished)
        #expect(log.completeShots.count == 5)
        let copied = log.shots.filter { $0.downloaded != nil }
        let onCard = log.shots.filter { $0.downloaded == nil }
        #expect(!copied.isEmpty && !onCard.isEmpty, "the folder filled mid-run: \(copied.count) copied")
        for shot in copied { #expect(FileManager.default.fileExists(atPath: shot.downloaded ?? "?"), "a shot names only a copy that was made") }
        let warnings = log.events.compactMap { if case .warning(let w) = $0 { w.message } else { nil } }
        #expect(warnings.count == onCard.count)
        for shot in onCard {
            let file = try #require(shot.file)
            #expect(
                warnings.contains {
                    $0.hasPrefix("step \(shot.step): downloading \(file)") && $0.hasSuffix("the frame is safe on the camera's card as \(file)")
                }, "\(warnings)")
        }
        #expect(play.stdout.contains("\(onCard.count) NOT downloaded (on the camera's card)"), "\(play.stdout)")
    }

    /// With a RAM target a frame that cannot be copied is lost: the run stops (brake, park,
    /// `missed` with the frame and the reason) and `--resume`, with room again, shoots it.
    @Test(.blocking) func aFolderThatFillsWithARamTargetStopsTheRunAndResumeShootsTheLostFrame() throws {
        let folder = try Tmpfs("size=16k")
        defer { folder.unmount() }
        let program = try makeProgram(download: folder.path, target: "ram", steps: 5)
        let logPath = dir.appendingPathComponent("ram.jsonl").path
        let play = try rig(["play", program, "--log", logPath])
        #expect(play.status == 1, "\(play.stderr)")
        #expect(play.stderr.contains("braking, then park"), "\(play.stderr)")
        let stopped = try log(logPath)
        let missed = try #require(stopped.events.compactMap { if case .missed(let m) = $0 { m } else { nil } }.first)
        #expect(missed.step == stopped.completeShots.count + 1)
        #expect(missed.reason?.contains("No space left on device") == true, "\(missed.reason ?? "")")
        #expect(missed.reason?.contains("it is lost") == true)
        #expect(stopped.shots.allSatisfy { $0.downloaded.map { FileManager.default.fileExists(atPath: $0) } == true })
        #expect(stopped.lastRunEnd?.reason == .fault)

        #expect(try folder.remount("size=1m") == 0)
        let resumed = try rig(["play", program, "--log", logPath, "--resume"])
        #expect(resumed.status == 0, "\(resumed.stderr)")
        #expect(resumed.stdout.contains("at step \(missed.step) of 5"), "\(resumed.stdout)")
        let done = try log(logPath)
        #expect(done.isFinished)
        #expect(done.finalShots.map(\.step) == Array(1...5))
        let copies = done.shots.compactMap(\.downloaded)
        #expect(copies.count == done.shots.count && Set(copies).count == copies.count, "\(copies)")
        for copy in copies { #expect(FileManager.default.contents(atPath: copy) == VirtualCamera.bytes(), "\(copy)") }
    }

    @Test(.blocking) func aReadOnlyFolderIsRefusedBeforeAnythingMoves() throws {
        let folder = try Tmpfs("size=16k,ro")
        defer { folder.unmount() }
        let program = try makeProgram(download: folder.path, target: "card", steps: 2)
        let logPath = dir.appendingPathComponent("ro.jsonl").path
        let play = try rig(["play", program, "--log", logPath])
        #expect(play.status == 2)
        #expect(play.stderr.contains(#"error: the camera's "download" folder \#(folder.path): cannot be written (Read-only file system)"#), "\(play.stderr)")
        #expect(!FileManager.default.fileExists(atPath: logPath))
        let sub = try makeProgram(download: folder.path + "/shots", target: "card", steps: 2)
        let nested = try rig(["play", sub, "--log", logPath])
        #expect(nested.status == 2)
        #expect(nested.stderr.contains("cannot be made (\(folder.path)/shots: Read-only file system)"), "\(nested.stderr)")
    }
}
