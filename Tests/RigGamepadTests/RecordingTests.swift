import CLinux
import Foundation
import RigCore
import RigFormat
import RigGamepad
import RigRuntime
import Testing

@Suite("recording keyframes while jogging")
struct RecordingTests {
    /// A scratch directory with the test rig file in it.
    static func scratch() throws -> (dir: String, rigPath: String) {
        let dir = NSTemporaryDirectory() + "rig-jog-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir + "/rigs", withIntermediateDirectories: true)
        let rigPath = dir + "/rigs/test.json"
        try TestRig.text.write(toFile: rigPath, atomically: true, encoding: .utf8)
        return (dir, rigPath)
    }

    static func load(_ path: String) throws -> Program {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let dir = (path as NSString).deletingLastPathComponent
        return try ProgramParser.parse(text: text, file: path) { rigPath, at throws(FileError) in
            let full = dir + "/" + rigPath
            guard let text = try? String(contentsOfFile: full, encoding: .utf8) else { throw at.error("cannot read \(full)") }
            return (text, full)
        }
    }

    /// Moves by stick for `ticks`, then lets go and waits for rest.
    static func jog(_ h: JogHarness, x: Int32 = 0, y: Int32 = 0, rx: Int32 = 0, ticks: Int) throws {
        try h.send { s in
            s.abs(ABS_X, x)
            s.abs(ABS_Y, y)
            s.abs(ABS_RX, rx)
            s.report()
        }
        h.run(ticks: ticks)
        try h.send { s in
            s.abs(ABS_X, 0)
            s.abs(ABS_Y, 0)
            s.abs(ABS_RX, 0)
            s.report()
        }
        h.run(ticks: 200)
    }

    @Test func recordDeleteSaveMakesAProgramThatPlaysAndChecks() throws {
        let (dir, rigPath) = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let programPath = dir + "/programs/shot.json"
        try FileManager.default.createDirectory(atPath: dir + "/programs", withIntermediateDirectories: true)
        let h = try JogHarness()
        let recorder = JogRecorder(
            rig: h.rig, kind: .keyframes(spacingSeconds: 2), programPath: programPath,
            rigPath: rigPath, preview: h.preview)
        #expect(recorder.rigReference == "../rigs/test.json")
        func drain() throws {
            for notice in h.drainNotices() { _ = try recorder.handle(notice) }
        }

        try h.send { $0.tap(BTN_SOUTH) }  // key 1 at home
        h.run(ticks: 1)
        try drain()
        try h.send { $0.tap(BTN_TR) }  // coarse
        try Self.jog(h, x: 32767, ticks: 150)  // pan far right: needs > 2 s
        try h.send { $0.tap(BTN_SOUTH) }
        h.run(ticks: 1)
        try drain()
        try Self.jog(h, y: -32768, rx: -20000, ticks: 60)
        try h.send { $0.tap(BTN_SOUTH) }
        h.run(ticks: 1)
        try drain()
        try Self.jog(h, x: -32768, ticks: 30)
        try h.send { $0.tap(BTN_SOUTH) }
        h.run(ticks: 1)
        try drain()
        #expect(recorder.recording.count == 4)
        try h.send { $0.tap(BTN_EAST) }  // delete the last
        h.run(ticks: 1)
        try drain()
        #expect(recorder.recording.count == 3)

        // Saved after every change: the file on disk already has three keys.
        let program = try Self.load(programPath)
        #expect(program.kind == .keyframes)
        guard case .continuous(let tracks, let duration) = program.motion else {
            Issue.record("not keyframes")
            return
        }
        #expect(tracks[0]?.keys.count == 3)
        #expect(tracks[0]?.keys[0].time == 0)
        #expect(duration > 4, "the far pan move stretched its gap beyond 2 s")
        #expect(abs((tracks[0]?.keys[1].value ?? 0) - recorder.recording.poses[1][0]) < 1e-9)
        let report = FeasibilityChecker.check(rig: program.rig, motion: program.motion, startPose: program.rig.homePose)
        #expect(report.feasible, "\(report.problems)")

        // Start saves and ends the session.
        try h.send { $0.tap(BTN_START) }
        h.run(ticks: 1)
        let notices = h.drainNotices()
        #expect(notices.contains(.save))
        for notice in notices { _ = try recorder.handle(notice) }
        h.run(ticks: 300) { $0.source.isFinished }
        #expect(h.source.isFinished)
        #expect(h.violations.isEmpty)
    }

    @Test func previewPlaysTheRecordingAndAStickInterruptsIt() throws {
        let h = try JogHarness()
        let recorder = JogRecorder(rig: h.rig, kind: .keyframes(spacingSeconds: 2), programPath: nil, rigPath: "rig.json", preview: h.preview)
        func drain() throws { for n in h.drainNotices() { _ = try recorder.handle(n) } }
        try h.send { $0.tap(BTN_NORTH) }
        h.run(ticks: 2)
        #expect(h.drainNotices().contains(.nothingToPreview))
        try h.send { $0.tap(BTN_SOUTH) }
        h.run(ticks: 1)
        try drain()
        try Self.jog(h, x: 32767, ticks: 60)
        try h.send { $0.tap(BTN_SOUTH) }
        h.run(ticks: 1)
        try drain()
        let end = recorder.recording.poses[1]
        try Self.jog(h, x: -32767, ticks: 100)
        try h.send { $0.tap(BTN_NORTH) }
        h.run(ticks: 2000) { $0.source.mode == .previewing }
        #expect(h.drainNotices().contains(.previewStarted))
        #expect(h.source.host.playersBuiltInTick == 0, "the session's thread built the preview's player, not the loop")
        h.run(ticks: 2000) { $0.source.mode == .jogging }
        #expect(zip(h.frame, end).allSatisfy { abs($0 - $1) < 1e-6 }, "the preview ends at the last key")
        #expect(h.violations.isEmpty)
        // Again, interrupted by the stick: it brakes and hands back to jogging.
        try h.send { $0.tap(BTN_NORTH) }
        h.run(ticks: 2000) { $0.source.mode == .previewing }
        h.run(ticks: 30)
        try h.send { s in
            s.abs(ABS_RX, 30000)
            s.report()
        }
        h.run(ticks: 200) { $0.source.mode == .jogging }
        #expect(h.source.mode == .jogging)
        #expect(h.violations.isEmpty)
    }

    @Test func aPreviewWaitsAtRestForItsPlayerAndAStickCancelsIt() throws {
        let h = try JogHarness()
        h.preparesPreview = false
        let recorder = JogRecorder(rig: h.rig, kind: .keyframes(spacingSeconds: 2), programPath: nil, rigPath: "rig.json", preview: h.preview)
        try h.send { $0.tap(BTN_SOUTH) }
        h.run(ticks: 1)
        for n in h.drainNotices() { _ = try recorder.handle(n) }
        try Self.jog(h, x: 32767, ticks: 60)
        try h.send { $0.tap(BTN_NORTH) }
        h.run(ticks: 2000) { $0.source.mode == .awaitingPreview }
        #expect(h.source.mode == .awaitingPreview)
        // Nobody builds it: the rig stays at rest, where the request was made.
        let rest = h.frame
        h.run(ticks: 50)
        #expect(h.source.mode == .awaitingPreview)
        #expect(h.frame == rest)
        // A stick takes over and the request is void: a program built now is not played.
        try h.send { s in
            s.abs(ABS_RX, 30000)
            s.report()
        }
        h.run(ticks: 5)
        #expect(h.source.mode == .jogging)
        h.preview.prepareRequested(rig: h.rig)
        #expect(h.preview.takeReady() == nil)
        try h.send { s in
            s.abs(ABS_RX, 0)
            s.report()
        }
        h.run(ticks: 300) { $0.velocities.allSatisfy { $0 == 0 } }
        // Asked again and built: it plays.
        h.preparesPreview = true
        try h.send { $0.tap(BTN_NORTH) }
        h.run(ticks: 2000) { $0.source.mode == .previewing }
        #expect(h.source.mode == .previewing)
        #expect(h.source.host.playersBuiltInTick == 0)
        #expect(h.violations.isEmpty)
    }

    @Test func timelapseKeysAreFramesAndTheFileChecks() throws {
        let (dir, rigPath) = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let programPath = dir + "/lapse.json"
        let rig = try TestRig.rig()
        let recorder = JogRecorder(rig: rig, kind: .timelapse(spacingFrames: 100), programPath: programPath, rigPath: rigPath, preview: PreviewSlot())
        _ = try recorder.handle(.record(pose: [-30, 10, 0]))
        _ = try recorder.handle(.record(pose: [30, 20.12345, 5]))
        _ = try recorder.handle(.record(pose: [60, 0, -5]))
        _ = try recorder.handle(.deleteLast)
        let program = try Self.load(programPath)
        #expect(program.kind == .timelapse)
        #expect(program.steps.count == 101)
        #expect(program.steps[100].pose == [30, 20.123, 5])
        let report = FeasibilityChecker.check(rig: program.rig, motion: program.motion, startPose: rig.homePose)
        #expect(report.feasible, "\(report.problems)")
    }

    @Test func aFailedSaveLeavesTheEarlierFileIntact() throws {
        let (dir, rigPath) = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let programPath = dir + "/p.json"
        let rig = try TestRig.rig()
        let recorder = JogRecorder(rig: rig, kind: .keyframes(spacingSeconds: 2), programPath: programPath, rigPath: rigPath, preview: PreviewSlot())
        _ = try recorder.handle(.record(pose: [0, 0, 0]))
        let before = try String(contentsOfFile: programPath, encoding: .utf8)
        // The directory becomes read-only: the temp file cannot be created.
        chmod(dir, 0o500)
        defer { chmod(dir, 0o700) }
        if getuid() != 0 {
            #expect(throws: AtomicFile.WriteError.self) { _ = try recorder.handle(.record(pose: [10, 0, 0])) }
            #expect(try String(contentsOfFile: programPath, encoding: .utf8) == before)
        }
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.contains(".tmp-") }
        #expect(leftovers.isEmpty)
    }

    @Test func keysAtSoftLimitsPlayWithoutTheLimiterBending() throws {
        let rig = try TestRig.rig()
        var recording = JogRecording(rig: rig, kind: .keyframes(spacingSeconds: 2))
        recording.append([90, 45, 80])
        recording.append([-90, -30, -80])
        recording.append([90, 45, 80])
        let motion = try #require(recording.motion())
        #expect(FeasibilityChecker.check(rig: rig, motion: motion, startPose: rig.homePose).feasible)
        var player = Player(rig: rig, motion: motion, startPose: rig.homePose)
        var limiter = MotionLimiter(axes: rig.axes, tickSeconds: rig.tickSeconds, startPose: rig.homePose)
        var frame = rig.homePose
        var bent = 0
        for _ in 0..<100_000 where !player.isFinished {
            if case .ready = player.tick(into: &frame) { player.advance() }
            if limiter.limit(&frame) != nil { bent += 1 }
        }
        for _ in 0..<100 where limiter.limit(&frame) != nil { bent += 1 }
        #expect(player.isFinished)
        #expect(bent == 0)
    }

    @Test func relativeRigPaths() {
        #expect(JogRecorder.relativePath(to: "/a/rigs/r.json", fromDirectoryOf: "/a/programs/p.json") == "../rigs/r.json")
        #expect(JogRecorder.relativePath(to: "/a/r.json", fromDirectoryOf: "/a/p.json") == "r.json")
        #expect(JogRecorder.relativePath(to: "/a/b/r.json", fromDirectoryOf: "/a/p.json") == "b/r.json")
    }
}
