import Foundation
import RigCore
import RigSky
import RigTestSupport
import Testing

@testable import RigRuntime

/// The live view's motion estimator: image shifts between frames by phase correlation,
/// and the camera's angular rate from them.
@Suite struct LiveViewMotionTests {
    /// A random texture as a function of the plane: Gaussian blobs of random place, size
    /// and brightness, so any sub-pixel shift of it is exact and nothing repeats. Sampled
    /// into a frame whose content is moved by (`dx`, `dy`) pixels.
    struct Texture {
        var blobs: [(x: Double, y: Double, radius: Double, amplitude: Double)] = []
        init(_ g: inout SplitMix64, width: Int, height: Int) {
            for _ in 0..<(width * height / 60) {
                blobs.append(
                    (
                        Double.random(in: -30...Double(width + 30), using: &g), Double.random(in: -30...Double(height + 30), using: &g),
                        Double.random(in: 1.2...6, using: &g), Double.random(in: -60...60, using: &g)
                    ))
            }
        }
        func frame(width: Int, height: Int, dx: Double, dy: Double) -> LumaImage {
            var field = [Double](repeating: 128, count: width * height)
            for blob in blobs {
                let (cx, cy) = (blob.x + dx, blob.y + dy)
                let reach = Int((3 * blob.radius).rounded(.up))
                let (x0, x1) = (max(0, Int(cx) - reach), min(width - 1, Int(cx) + reach))
                let (y0, y1) = (max(0, Int(cy) - reach), min(height - 1, Int(cy) + reach))
                guard x0 <= x1, y0 <= y1 else { continue }
                for y in y0...y1 {
                    for x in x0...x1 {
                        let (u, v) = (Double(x) - cx, Double(y) - cy)
                        field[y * width + x] += blob.amplitude * exp(-(u * u + v * v) / (2 * blob.radius * blob.radius))
                    }
                }
            }
            return LumaImage(width: width, height: height, pixels: field.map { UInt8(max(0, min(255, $0.rounded()))) })
        }
    }

    @Test func randomTexturesShiftedByRandomSubPixelAmountsAreMeasuredWithinAHundredthOfAPixelOrSo() throws {
        var g = SplitMix64(seed: 3636)
        var worst = 0.0
        for _ in 0..<12 {
            let texture = Texture(&g, width: 192, height: 192)
            let (dx, dy) = (Double.random(in: -20...20, using: &g), Double.random(in: -20...20, using: &g))
            let correlator = try #require(PhaseCorrelator(width: 192, height: 192, maxSize: 128))
            #expect(correlator.push(texture.frame(width: 192, height: 192, dx: 0, dy: 0)) == nil)
            let shift = try #require(correlator.push(texture.frame(width: 192, height: 192, dx: dx, dy: dy)))
            worst = max(worst, abs(shift.x - dx), abs(shift.y - dy))
            #expect(abs(shift.x - dx) < 0.05 && abs(shift.y - dy) < 0.05, "measured (\(shift.x), \(shift.y)) for (\(dx), \(dy))")
        }
        print("worst error: \(worst) px")
    }

    @Test func throughJPEGTheShiftsHoldWithinAFifthOfAPixel() throws {
        var g = SplitMix64(seed: 36_36)
        for _ in 0..<8 {
            let texture = Texture(&g, width: 320, height: 240)
            let (dx, dy) = (Double.random(in: -10...10, using: &g), Double.random(in: -10...10, using: &g))
            let correlator = try #require(PhaseCorrelator(width: 320, height: 240))
            for (x, y) in [(0.0, 0.0), (dx, dy)] {
                let luma = texture.frame(width: 320, height: 240, dx: x, dy: y)
                let rgb = luma.pixels.flatMap { [$0, $0, $0] }
                let jpeg = try #require(JPEG.encode(rgb: rgb, width: 320, height: 240, quality: 75))
                let decoded = try #require(JPEG.luma(jpeg, minWidth: 320))
                #expect(decoded.width == 320 && decoded.height == 240)
                if let shift = correlator.push(decoded) {
                    #expect(abs(shift.x - dx) < 0.2 && abs(shift.y - dy) < 0.2, "measured (\(shift.x), \(shift.y)) for (\(dx), \(dy))")
                } else {
                    #expect(x == 0, "no shift found for (\(dx), \(dy))")
                }
            }
        }
    }

    @Test func unrelatedFramesGiveNoShift() throws {
        var g = SplitMix64(seed: 7)
        let correlator = try #require(PhaseCorrelator(width: 128, height: 128))
        for _ in 0..<2 {
            let noise = (0..<(128 * 128)).map { _ in UInt8.random(in: 0...255, using: &g) }
            _ = correlator.push(LumaImage(width: 128, height: 128, pixels: noise))
        }
        let noise = (0..<(128 * 128)).map { _ in UInt8.random(in: 0...255, using: &g) }
        #expect(correlator.push(LumaImage(width: 128, height: 128, pixels: noise)) == nil)
        // A flat view has nothing to see.
        let flat = LumaImage(width: 128, height: 128, pixels: [UInt8](repeating: 90, count: 128 * 128))
        _ = correlator.push(flat)
        #expect(correlator.push(flat) == nil)
    }

    /// The simulated camera's scene, panned and tilted at random rates between frames
    /// stamped 50 ms apart: the sensor's rate is the camera's, through the lens's field
    /// of view and the stamps.
    @Test func theSensorTurnsShiftsIntoTheCamerasRate() async throws {
        var g = SplitMix64(seed: 361)
        let fov = 60.0
        let painter = SimScenePainter(width: 320, height: 240, fieldOfViewDegrees: fov)
        let feed = LiveViewFeed()
        let sensor = LiveViewMotion(feed: feed, fieldOfViewDegrees: fov)
        try sensor.start()
        defer { sensor.close() }
        var pan = Double.random(in: -40...40, using: &g)
        var tilt = Double.random(in: -10...10, using: &g)
        let interval: UInt64 = 50_000_000
        var stamp = LiveViewFrame.now()
        var number = 0
        func publish() throws {
            number += 1
            let jpeg = try #require(JPEG.encode(rgb: painter.render(panDegrees: pan, tiltDegrees: tilt), width: 320, height: 240, quality: 75))
            feed.publish(try #require(LiveViewFrame.stamped(jpeg, number: number, capturedNanoseconds: stamp)))
        }
        try publish()
        for _ in 0..<8 {
            let (panRate, tiltRate) = (Double.random(in: -20...20, using: &g), Double.random(in: -8...8, using: &g))
            let before = sensor.pairsMeasured
            stamp += interval
            pan += panRate * 0.05
            tilt += tiltRate * 0.05
            try publish()
            try await onThread {
                let deadline = Date().addingTimeInterval(30)
                while sensor.pairsMeasured == before, Date() < deadline { usleep(1000) }
            }
            let latest = try #require(sensor.latest)
            // Pan as the view sees it is the pan rate × cos(tilt).
            let right = panRate * cos(tilt * .pi / 180)
            #expect(abs(latest.right - right) < 0.05 * abs(right) + 0.3, "right \(latest.right) °/s for \(right)")
            #expect(abs(latest.up - tiltRate) < 0.05 * abs(tiltRate) + 0.3, "up \(latest.up) °/s for \(tiltRate)")
        }
    }
}
