import Foundation
import RigCore
import RigRuntime
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
