import Dispatch
import FoundationEssentials
import Glibc
import RigCore
import RigFormat
import RigSky
import Synchronization

/// A `"sim"` camera's `"preview"`: the live view it draws of its test scene.
public struct SimPreviewConfig: Sendable, Equatable {
    /// Frames a second at most (the drawing may be slower on a small machine).
    public var fps: Double = 10
    public var width = 640
    public var height = 480
    /// The lens's horizontal field of view.
    public var fieldOfViewDegrees: Double = 60
    /// libjpeg-turbo's quality, 1…100.
    public var quality = 75

    public init() {}

    /// `{"fps": 10, "width": 640, "height": 480, "fovDeg": 60, "quality": 75}`, every key optional.
    public static func parse(_ value: ValueReader) throws(FileError) -> SimPreviewConfig {
        let object = try value.object()
        var config = SimPreviewConfig()
        if let v = object.optional("fps") { config.fps = try v.number(in: 0.1...60, unit: "frames/s") }
        if let v = object.optional("width") { config.width = try v.integer(in: 16...1920) }
        if let v = object.optional("height") { config.height = try v.integer(in: 16...1080) }
        if let v = object.optional("fovDeg") { config.fieldOfViewDegrees = try v.number(in: 5...150, unit: "°") }
        if let v = object.optional("quality") { config.quality = try v.integer(in: 10...100) }
        try object.finish()
        return config
    }
}

/// The simulated camera's test scene: a sphere around the rig drawn procedurally as an
/// equirectangular map (nothing is downloaded or read): sky above the horizon, ground
/// below, a line every 10° (brighter every 30°), and a numbered white marker at every
/// 30° of pan and every 30° of tilt from −60° to 60° (1 at pan −180°, tilt 60°, counting
/// along each row). Seen through a pinhole lens at the rig's pan and tilt, so a frame
/// shows where the rig points: pan 0, tilt 0 has marker 31 in its centre.
public struct SimScenePainter: Sendable {
    public let width: Int
    public let height: Int
    /// Focal length in pixels.
    private let focal: Double

    public init(width: Int, height: Int, fieldOfViewDegrees: Double) {
        self.width = width
        self.height = height
        focal = Double(width) / 2 / tan(fieldOfViewDegrees * .pi / 360)
    }

    /// The marker number at (pan, tilt) in whole multiples of 30° (tilt −60…60), the
    /// scene's own numbering.
    public static func marker(panDegrees: Int, tiltDegrees: Int) -> Int {
        let column = ((panDegrees + 180) / 30 % 12 + 12) % 12
        let row = (60 - tiltDegrees) / 30
        return row * 12 + column + 1
    }

    /// RGB pixels of the view at `pan`, `tilt` (degrees; pan positive to the right, tilt
    /// positive up).
    public func render(panDegrees: Double, tiltDegrees: Double) -> [UInt8] {
        var pixels = [UInt8](repeating: 0, count: width * height * 3)
        let (sp, cp) = (sin(panDegrees * .pi / 180), cos(panDegrees * .pi / 180))
        let (st, ct) = (sin(tiltDegrees * .pi / 180), cos(tiltDegrees * .pi / 180))
        // About one pixel's angle: lines stay a pixel or two wide at any field of view.
        let line = max(0.12, 0.9 * 180 / .pi / focal)
        pixels.withUnsafeMutableBufferPointer { out in
            var i = 0
            for row in 0..<height {
                let y = -(Double(row) - Double(height) / 2 + 0.5) / focal
                for column in 0..<width {
                    let x = (Double(column) - Double(width) / 2 + 0.5) / focal
                    // Tilt about x, then pan about the vertical.
                    let y1 = y * ct + st
                    let z1 = -y * st + ct
                    let x2 = x * cp + z1 * sp
                    let z2 = -x * sp + z1 * cp
                    let longitude = atan2(x2, z2) * 180 / .pi
                    let latitude = atan2(y1, (x2 * x2 + z2 * z2).squareRoot()) * 180 / .pi
                    let (r, g, b) = Self.colour(longitude: longitude, latitude: latitude, line: line)
                    out[i] = r
                    out[i + 1] = g
                    out[i + 2] = b
                    i += 3
                }
            }
        }
        return pixels
    }

    /// 3×5 digits, rows top to bottom, 3 bits a row (left bit first).
    private static let digits: [UInt16] = [
        0b111_101_101_101_111, 0b010_110_010_010_111, 0b111_001_111_100_111, 0b111_001_111_001_111, 0b101_101_111_001_001,
        0b111_100_111_001_111, 0b111_100_111_101_111, 0b111_001_010_010_010, 0b111_101_111_101_111, 0b111_101_111_001_111,
    ]

    static func colour(longitude: Double, latitude: Double, line: Double) -> (UInt8, UInt8, UInt8) {
        // A marker: the nearest 30° crossing from tilt −60 to 60.
        let markerLat = min(60, max(-60, (latitude / 30).rounded() * 30))
        var markerLon = (longitude / 30).rounded() * 30
        if markerLon >= 180 { markerLon -= 360 }
        var dLon = longitude - markerLon
        if dLon > 180 { dLon -= 360 }
        if dLon < -180 { dLon += 360 }
        let dx = dLon * cos(markerLat * .pi / 180)
        let dy = markerLat - latitude
        if dx * dx + dy * dy < 5.5 * 5.5 {
            let number = marker(panDegrees: Int(markerLon), tiltDegrees: Int(markerLat))
            // Two digits of 3×5 cells, 0.9° a cell, one cell apart, centred.
            let cell = 0.9
            let column = Int(((dx + 3.5 * cell) / cell).rounded(.down))
            let row = Int(((dy + 2.5 * cell) / cell).rounded(.down))
            if row >= 0, row < 5, column >= 0, column < 7, column != 3 {
                let digit = column < 3 ? number / 10 : number % 10
                let bit = column < 3 ? column : column - 4
                if digits[digit] >> (14 - (row * 3 + bit)) & 1 == 1 { return (0, 0, 0) }
            }
            return (250, 250, 245)
        }
        // Grid lines: every 10°, brighter every 30°; the horizon brightest.
        let onLon = abs(longitude - (longitude / 10).rounded() * 10) * cos(latitude * .pi / 180) < line
        let onLat = abs(latitude - (latitude / 10).rounded() * 10) < line
        if abs(latitude) < line * 1.5 { return (255, 200, 40) }
        if onLon || onLat {
            let major =
                (onLon && Int((longitude / 10).rounded()) % 3 == 0) || (onLat && Int((latitude / 10).rounded()) % 3 == 0)
            return major ? (230, 230, 230) : (150, 150, 150)
        }
        if latitude > 0 {
            // Sky: deeper blue upward.
            let t = latitude / 90
            return (UInt8(70 - 50 * t), UInt8(120 - 70 * t), UInt8(200 - 60 * t))
        }
        // Ground: a darker, warmer band every 30° of pan, so each direction looks different.
        let band = Int(((longitude + 180) / 30).rounded(.down)) % 2 == 0
        let t = -latitude / 90
        return band ? (UInt8(90 - 40 * t), UInt8(110 - 50 * t), UInt8(60 - 30 * t)) : (UInt8(110 - 40 * t), UInt8(95 - 40 * t), UInt8(60 - 30 * t))
    }
}

/// The simulated camera's live view: a thread of its own that draws the scene at the
/// rig's pose, encodes it with libjpeg-turbo, stamps it and publishes it, `fps` times a
/// second while someone watches, and sleeps while nobody does.
final class SimLiveView: Sendable {
    let feed = LiveViewFeed()
    private let config: SimPreviewConfig
    private let painter: SimScenePainter
    /// Where pan and tilt are in the rig's pose (nil: that axis stays at 0).
    private let panIndex: Int?
    private let tiltIndex: Int?
    private let restPose: [Double]
    private let pose = Mutex<(@Sendable () -> [Double]?)?>(nil)
    private let wake = DispatchSemaphore(value: 0)
    private let started = Atomic<Bool>(false)
    private let frames = Atomic<Int>(0)

    init(config: SimPreviewConfig, axisNames: [String], restPose: [Double]) {
        self.config = config
        painter = SimScenePainter(width: config.width, height: config.height, fieldOfViewDegrees: config.fieldOfViewDegrees)
        panIndex = axisNames.firstIndex(of: "pan") ?? (axisNames.isEmpty ? nil : 0)
        tiltIndex = axisNames.firstIndex(of: "tilt") ?? (axisNames.count > 1 && panIndex != 1 ? 1 : nil)
        self.restPose = restPose
        feed.onWake { [weak self] in self?.poke() }
    }

    func follow(pose provider: @escaping @Sendable () -> [Double]?) {
        pose.withLock { $0 = provider }
    }

    /// Starts the drawing thread on the first viewer; wakes it after that.
    private func poke() {
        if !started.exchange(true, ordering: .acquiringAndReleasing) {
            SystemThread.start(name: "rig-sim-liveview") { [self] in run() }
        }
        wake.signal()
    }

    /// One frame now, at the rig's pose.
    func frame() -> LiveViewFrame? {
        let current = pose.withLock { $0 }?() ?? restPose
        let pan = panIndex.flatMap { $0 < current.count ? current[$0] : nil } ?? 0
        let tilt = tiltIndex.flatMap { $0 < current.count ? current[$0] : nil } ?? 0
        let captured = LiveViewFrame.now()
        let pixels = painter.render(panDegrees: pan, tiltDegrees: tilt)
        guard let jpeg = JPEG.encode(rgb: pixels, width: painter.width, height: painter.height, quality: config.quality) else { return nil }
        let number = frames.add(1, ordering: .relaxed).newValue
        return LiveViewFrame.stamped(jpeg, number: number, capturedNanoseconds: captured)
    }

    private func run() {
        let period = 1 / config.fps
        while feed.state != .closed {
            guard feed.isWanted else {
                feed.set(.off)
                wake.wait()
                continue
            }
            let began = DispatchTime.now()
            if let frame = frame() { feed.publish(frame) } else { feed.set(.failed("libjpeg-turbo could not encode the frame")) }
            // Until the next frame is due; a wake (a viewer left) only ends the wait early.
            let due = began + period
            while DispatchTime.now() < due, feed.isWanted {
                _ = wake.wait(timeout: due)
            }
        }
    }
}
