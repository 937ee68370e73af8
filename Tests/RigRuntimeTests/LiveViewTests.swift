import Foundation
import RigCore
import RigRuntime
import Synchronization
import Testing

/// The live view's camera side: the simulated camera's frames (JPEG, stamped, counted up,
/// drawn where the rig points), the feed that starts and stops it, and each viewer's slot
/// of one frame.
@Suite struct LiveViewTests {
    static func sim(fps: Double = 30) -> SimCamera {
        var preview = SimPreviewConfig()
        preview.fps = fps
        preview.width = 96
        preview.height = 64
        return SimCamera(preview: preview, axisNames: ["pan", "tilt"], restPose: [0, 0])
    }

    static func frame(_ number: Int) -> LiveViewFrame {
        LiveViewFrame(number: number, capturedNanoseconds: UInt64(number), jpeg: [UInt8(number & 0xFF)])
    }

    @Test func theSimulatedCamerasFramesAreJPEGsWithRisingNumbers() throws {
        let camera = Self.sim()
        defer { camera.close() }
        #expect(camera.liveView.state == .off)
        let slot = try #require(camera.liveView.join())
        var numbers: [Int] = []
        var times: [UInt64] = []
        for _ in 0..<4 {
            let frame = try #require(slot.next(within: 30), "no frame within 30 s")
            let decoded = try #require(JPEG.decode(frame.jpeg), "frame \(frame.number) is not a JPEG libjpeg-turbo reads")
            #expect(decoded.width == 96 && decoded.height == 64)
            // The stamp is in the bytes themselves, as a viewer receives them.
            let stamp = try #require(LiveViewFrame.readStamp(frame.jpeg))
            #expect(stamp.number == frame.number && stamp.capturedNanoseconds == frame.capturedNanoseconds)
            numbers.append(stamp.number)
            times.append(stamp.capturedNanoseconds)
        }
        #expect(zip(numbers, numbers.dropFirst()).allSatisfy { $0 < $1 }, "\(numbers)")
        #expect(zip(times, times.dropFirst()).allSatisfy { $0 <= $1 })
        #expect(camera.liveView.state == .on)
        // The last viewer out stops the drawing: woken by the feed's change notice.
        let changed = DispatchSemaphore(value: 0)
        camera.liveView.onChange { changed.signal() }
        camera.liveView.leave(slot)
        while camera.liveView.state != .off, changed.wait(timeout: .now() + 30) == .success {}
        #expect(camera.liveView.state == .off)
        #expect(camera.liveView.isWanted == false)
    }

    @Test func theSceneIsDrawnWhereTheRigPoints() throws {
        let painter = SimScenePainter(width: 64, height: 48, fieldOfViewDegrees: 40)
        func centre(_ pixels: [UInt8]) -> [UInt8] {
            let i = (24 * 64 + 32) * 3
            return Array(pixels[i..<(i + 3)])
        }
        // Pan 0, tilt 0 looks at marker 31 (white, the gap between its digits in the middle).
        #expect(SimScenePainter.marker(panDegrees: 0, tiltDegrees: 0) == 31)
        #expect(centre(painter.render(panDegrees: 0, tiltDegrees: 0)) == [250, 250, 245])
        // 15° to the side is between markers, above the horizon: sky, not a marker.
        let sky = centre(painter.render(panDegrees: 15, tiltDegrees: 15))
        #expect(sky[2] > sky[0] && sky != [250, 250, 245])
        // The frame a camera follows a pose with differs from its rest view.
        let camera = Self.sim()
        defer { camera.close() }
        let rest = try #require(camera.previewFrame())
        camera.follow(pose: { [20, -10] })
        let moved = try #require(camera.previewFrame())
        #expect(JPEG.decode(rest.jpeg)?.rgb != JPEG.decode(moved.jpeg)?.rgb)
        #expect(moved.number > rest.number)
    }

    @Test func aSlotHoldsOnlyTheNewestFrame() throws {
        let slot = LiveViewSlot()
        for n in 1...100 {
            slot.put(Self.frame(n))
            #expect(slot.pending == 1)
        }
        #expect(slot.skipped == 99)
        #expect(slot.next(within: 0)?.number == 100)
        #expect(slot.pending == 0)
        // Nothing new: no frame (an old one is never given twice).
        #expect(slot.next(within: 0) == nil)
        slot.close()
        slot.put(Self.frame(101))
        #expect(slot.pending == 0 && slot.next(within: 0) == nil)
    }

    @Test func aViewerThatDoesNotReadMakesNoOtherWait() async throws {
        let feed = LiveViewFeed()
        let reader = try #require(feed.join())
        let idle = try #require(feed.join())
        #expect(feed.isWanted && feed.viewerCount == 2)
        for n in 1...200 {
            feed.publish(Self.frame(n))
            // The reader gets every frame as it comes, however far behind the idle one is.
            #expect(await reader.next()?.number == n)
            #expect(idle.pending <= 1)
        }
        #expect(idle.pending == 1 && idle.skipped == 199)
        #expect(await idle.next()?.number == 200)
        feed.leave(reader)
        #expect(feed.isWanted)
        feed.leave(idle)
        #expect(!feed.isWanted)
    }

    @Test func aWaitingViewerEndsWhenTheRunEnds() async throws {
        let feed = LiveViewFeed()
        let slot = try #require(feed.join())
        async let waited = slot.next()
        // The viewer is waiting (or about to): closing the feed ends it either way.
        feed.close()
        #expect(await waited == nil)
        #expect(feed.join() == nil && feed.state == .closed)
    }

    @Test func aCameraWithoutLiveViewSaysSoOnce() throws {
        let camera = SimCamera()
        #expect(camera.liveView.join() == nil)
        guard case .unsupported(let why) = camera.liveView.state else {
            Issue.record("state \(camera.liveView.state)")
            return
        }
        #expect(why.hasPrefix(LiveViewFeed.noLiveView))
        #expect(camera.previewFrame() == nil)
    }

    @Test func aStampGoesInACommentSegmentAndLeavesTheImageAlone() throws {
        let pixels = [UInt8](repeating: 128, count: 16 * 16 * 3)
        let jpeg = try #require(JPEG.encode(rgb: pixels, width: 16, height: 16))
        let stamped = try #require(LiveViewFrame.stamped(jpeg, number: 7, capturedNanoseconds: 123_456))
        let stamp = try #require(LiveViewFrame.readStamp(stamped.jpeg))
        #expect(stamp.number == 7 && stamp.capturedNanoseconds == 123_456)
        #expect(JPEG.decode(stamped.jpeg)?.rgb == JPEG.decode(jpeg)?.rgb)
        #expect(LiveViewFrame.stamped([0x00, 0x01, 0x02, 0x03], number: 1, capturedNanoseconds: 0) == nil)
    }
}

/// Tap to focus on the simulated camera: its AF point in its sensor's pixels (3:2, of which
/// the 4:3 view shows the middle), and its frames sharp where it focused.
@Suite struct SimFocusTests {
    /// Mean squared step between neighbouring pixels' luma across rows `rows` (fractions
    /// of the height): how sharp that band of the frame is.
    static func sharpness(_ jpeg: [UInt8], rows: ClosedRange<Double>) throws -> Double {
        let image = try #require(JPEG.decode(jpeg))
        var sum = 0.0
        var count = 0
        for row in Int(rows.lowerBound * Double(image.height))..<min(image.height, Int(rows.upperBound * Double(image.height))) {
            for column in 1..<image.width {
                func luma(_ c: Int) -> Double {
                    let p = (row * image.width + c) * 3
                    return 0.299 * Double(image.rgb[p]) + 0.587 * Double(image.rgb[p + 1]) + 0.114 * Double(image.rgb[p + 2])
                }
                let step = luma(column) - luma(column - 1)
                sum += step * step
                count += 1
            }
        }
        return sum / Double(max(1, count))
    }

    @Test func aTapFocusesOnWhatLiesThereAndTheFrameShowsIt() throws {
        var preview = SimPreviewConfig()
        preview.width = 320
        preview.height = 240
        preview.fieldOfViewDegrees = 90
        // Looking 40° down: the ground fills the bottom of the view, the horizon is near the top.
        let camera = SimCamera(preview: preview, axisNames: ["pan", "tilt"], restPose: [0, -40])
        defer { camera.close() }
        #expect(camera.focusPointProblem == nil)
        let before = try #require(camera.previewFrame())
        // Focused at infinity (where it starts): the near ground is soft, the horizon sharp.
        let report = try camera.focus(viewX: 0.5, viewY: 0.9, viewAspect: 4.0 / 3)
        #expect(report.grid == FocusGrid(width: 6000, height: 4000))
        #expect(report.cameraX == 3000 && report.cameraY == 3600, "\(report)")
        #expect(report.setting.hasPrefix("afpoint=3000,3600") && report.setting.contains(" m)"), "\(report.setting)")
        let after = try #require(camera.previewFrame())
        let near = (try Self.sharpness(before.jpeg, rows: 0.8...1), try Self.sharpness(after.jpeg, rows: 0.8...1))
        let far = (try Self.sharpness(before.jpeg, rows: 0...0.2), try Self.sharpness(after.jpeg, rows: 0...0.2))
        #expect(near.1 > 2 * near.0, "the tapped ground: \(near)")
        #expect(far.1 < far.0, "the horizon: \(far)")
        // Back to the horizon: sharp there again.
        _ = try camera.focus(viewX: 0.5, viewY: 0.02, viewAspect: 4.0 / 3)
        let again = try #require(camera.previewFrame())
        #expect(try Self.sharpness(again.jpeg, rows: 0...0.2) > far.1)
    }

    @Test func theAFGridIsReadFromThePreview() throws {
        func preview(_ grid: String) throws -> SimPreviewConfig? {
            let rig = try RigParser.parse(
                text:
                    #"{"name": "r", "output": {"type": "sim"}, "axes": [{"name": "pan", "channel": 0}], "camera": {"type": "sim", "preview": {"afGrid": \#(grid)}}}"#,
                file: "rig.json")
            return try SimCamera.parseConfig(try #require(rig.camera)).preview
        }
        #expect(try preview("[3000, 2000]")?.focusGrid == FocusGrid(width: 3000, height: 2000))
        #expect(SimPreviewConfig().focusGrid == FocusGrid(width: 6000, height: 4000))
        for wrong in ["[1.5, 2000]", "[3000]", "[3000, 2]"] {
            #expect(throws: (any Error).self, "\(wrong)") { try preview(wrong) }
        }
    }

    @Test func withoutAPreviewThereIsNothingToTap() {
        let camera = SimCamera()
        #expect(camera.focusPointProblem?.contains("no live view") == true)
        #expect(throws: CameraError.self) { try camera.focus(viewX: 0.5, viewY: 0.5, viewAspect: 1.5) }
    }
}

/// The simulated camera's live-view faults (`"preview": {"faults": …}`) against the feed's
/// promises, and its motion blur.
@Suite struct SimLiveViewFaultTests {
    /// A value the camera's threads and the test share.
    final class Shared<Value: Sendable>: Sendable {
        let value: Mutex<Value>
        init(_ value: Value) { self.value = Mutex(value) }
    }

    static func camera(_ preview: String, restPose: [Double] = [0, 0]) throws -> SimCamera {
        let rig = try RigParser.parse(
            text:
                #"{"name": "r", "output": {"type": "sim"}, "axes": [{"name": "pan", "channel": 0}, {"name": "tilt", "channel": 1}], "camera": {"type": "sim", "preview": \#(preview)}}"#,
            file: "rig.json")
        let config = try SimCamera.parseConfig(try #require(rig.camera))
        return SimCamera(preview: config.preview, axisNames: ["pan", "tilt"], restPose: restPose)
    }

    /// A stall of 1.6 s is said once when it passes the feed's stall time (1 s at 20 frames/s),
    /// and once more when the frames come back, numbered on; a camera that then stops
    /// answering is said once however long the viewer waits, and the run still ends.
    @Test func aStallIsSaidOnceTheFramesComeBackAndASilentCameraStillCloses() throws {
        let camera = try Self.camera(#"{"fps": 20, "width": 64, "height": 48, "faults": {"stallAfterFrames": 3, "stallSeconds": 1.6, "silentAfterFrames": 5}}"#)
        defer { camera.close() }
        let feed = camera.liveView
        #expect(feed.stallSeconds == 1)
        let notes = Shared<[String]>([])
        feed.onNote { line in notes.value.withLock { $0.append(line) } }
        let slot = try #require(feed.join())
        var numbers: [Int] = []
        var sawStalled = false
        let deadline = Date() + 60
        // As a viewer's stream does: waits for frames, asking the feed whether they stalled.
        while numbers.count < 5, Date() < deadline {
            if let frame = slot.next(within: 0.05) { numbers.append(frame.number) }
            sawStalled = feed.checkStall() || sawStalled
        }
        #expect(numbers == [1, 2, 3, 4, 5])
        #expect(sawStalled)
        #expect(feed.state == .on)
        let said = notes.value.withLock { $0 }
        #expect(said.count == 2 && said[0].contains("no frame for") && said[1].hasPrefix("live view: frames again after"), "\(said)")
        // Silent from now on: stalled, said once, while the viewer goes on waiting.
        var checks = 0
        while Date() < deadline, checks < 10 {
            #expect(slot.next(within: 0.05) == nil)
            if feed.checkStall() { checks += 1 }
        }
        #expect(checks == 10 && feed.state.word == "stalled")
        #expect(notes.value.withLock { $0.count } == 3, "\(notes.value.withLock { $0 })")
        // The run ends: the waiting viewer's stream ends too.
        camera.close()
        #expect(slot.next(within: 30) == nil && slot.isClosed)
        #expect(feed.state == .closed)
    }

    /// A camera asked for frames during a shot answers "busy": the shot is not held up (its
    /// report comes at once), the live view says paused, not failed, and frames come again
    /// after the shot.
    @Test func busyDuringAShotHoldsUpNothingAndTheFramesComeBack() throws {
        let camera = try Self.camera(#"{"fps": 20, "width": 64, "height": 48, "faults": {"busyDuringShots": true}}"#)
        defer { camera.close() }
        let slot = try #require(camera.liveView.join())
        _ = try #require(slot.next(within: 30))
        let shot = ShotTiming(focusSeconds: 0, shutterHoldSeconds: 0.1, exposureWindowSeconds: 0.3, afterShotSeconds: 0, shotsPerStep: 1)
        let reported = Shared(false)
        camera.shoot(ShotRequest(timing: shot)) { _ in reported.value.withLock { $0 = true } }
        let ended = LiveViewFrame.now() + UInt64(shot.shotSeconds * 1e9)
        #expect(reported.value.withLock { $0 }, "the shot waited for the live view")
        #expect(camera.liveView.state == .paused)
        // Frames again once the shot is over, captured after it.
        var after: LiveViewFrame?
        let deadline = Date() + 30
        while Date() < deadline, after == nil {
            if let frame = slot.next(within: 1), frame.capturedNanoseconds >= ended { after = frame }
        }
        #expect(after != nil)
        #expect(camera.liveViewBusyAnswers > 0, "the fault never happened")
        #expect(camera.liveView.state == .on)
    }

    /// The head's move during each frame's exposure streaks it: more for a faster pan
    /// (the pose read at the exposure's start and end, here a fixed step a read).
    @Test func theHeadsSpeedStreaksTheFrame() throws {
        var sharpness: [Double] = []
        for degreesPerRead in [0.0, 1, 4] {
            let camera = try Self.camera(#"{"fps": 10, "width": 160, "height": 120, "exposureMs": 20}"#)
            defer { camera.close() }
            let reads = Shared(0.0)
            camera.follow {
                reads.value.withLock { n in
                    n += 1
                    return [n * degreesPerRead, 0]
                }
            }
            let frame = try #require(camera.previewFrame())
            sharpness.append(try SimFocusTests.sharpness(frame.jpeg, rows: 0...1))
        }
        #expect(sharpness[0] > 1.3 * sharpness[1] && sharpness[1] > 1.3 * sharpness[2], "\(sharpness)")
        // An exposure longer than a frame is refused, naming the limit.
        #expect(throws: (any Error).self) { try Self.camera(#"{"fps": 10, "exposureMs": 200}"#) }
    }
}
