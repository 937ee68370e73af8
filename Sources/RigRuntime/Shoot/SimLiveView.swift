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
    /// Where its AF point goes (tap to focus): the pixels of its "sensor", of which the view
    /// shows the middle in its own aspect (`FocusGrid`); 3:2, as most cameras' are.
    public var focusGrid = FocusGrid(width: 6000, height: 4000)
    /// Each frame's exposure: the head's move during it streaks the frame (motion blur in
    /// proportion to the axes' speed); 0, none.
    public var exposureSeconds = 0.0
    /// What goes wrong on purpose (none by default).
    public var faults = SimPreviewFaults()

    public init() {}

    /// How long frames may stop before the server says the live view stalled: 5 frames'
    /// time, at least a second.
    public var stallSeconds: Double { max(1, 5 / fps) }

    /// `{"fps": 10, "width": 640, "height": 480, "fovDeg": 60, "quality": 75, "afGrid": [6000, 4000],
    /// "exposureMs": 0, "faults": {…}}`, every key optional.
    public static func parse(_ value: ValueReader) throws(FileError) -> SimPreviewConfig {
        let object = try value.object()
        var config = SimPreviewConfig()
        if let v = object.optional("fps") { config.fps = try v.number(in: 0.1...60, unit: "frames/s") }
        if let v = object.optional("width") { config.width = try v.integer(in: 16...1920) }
        if let v = object.optional("height") { config.height = try v.integer(in: 16...1080) }
        if let v = object.optional("fovDeg") { config.fieldOfViewDegrees = try v.number(in: 5...150, unit: "°") }
        if let v = object.optional("quality") { config.quality = try v.integer(in: 10...100) }
        if let v = object.optional("afGrid") {
            let size = try v.numbers(count: 2, in: 16...100_000, unit: "px")
            guard size.allSatisfy({ $0 == $0.rounded() }) else { throw v.error("\"afGrid\" is [width, height] in whole pixels") }
            config.focusGrid = FocusGrid(width: Int(size[0]), height: Int(size[1]))
        }
        if let v = object.optional("exposureMs") { config.exposureSeconds = try v.number(in: 0...1000, unit: "ms") / 1000 }
        if config.exposureSeconds > 1 / config.fps, let v = object.optional("exposureMs") {
            throw v.error("\"exposureMs\" is at most a frame's time, \(fixed(1000 / config.fps, 1)) ms at \(fixed(config.fps, 1)) frames/s")
        }
        if let v = object.optional("faults") { config.faults = try SimPreviewFaults.parse(v) }
        try object.finish()
        return config
    }
}

/// The simulated camera's live-view faults, to test the server against what real cameras
/// do: `{"stallAfterFrames": 20, "stallSeconds": 3, "busyDuringShots": true, "silentAfterFrames": 100}`,
/// every key optional.
public struct SimPreviewFaults: Sendable, Equatable {
    /// After this many frames it sends none for `stallSeconds`, once (a camera that hangs a
    /// while), then goes on.
    public var stallAfterFrames: Int?
    public var stallSeconds = 3.0
    /// Its live view is asked for frames during each shot, as by a host that does not pause
    /// it, and answers "busy" until the shot is over (each answer counted); frames come
    /// again after it.
    public var busyDuringShots = false
    /// After this many frames it never answers again (a camera that stopped answering).
    public var silentAfterFrames: Int?

    public init() {}

    public static func parse(_ value: ValueReader) throws(FileError) -> SimPreviewFaults {
        let object = try value.object()
        var faults = SimPreviewFaults()
        if let v = object.optional("stallAfterFrames") { faults.stallAfterFrames = try v.integer(in: 0...1_000_000) }
        if let v = object.optional("stallSeconds") { faults.stallSeconds = try v.number(in: 0.1...3600, unit: "s") }
        if let v = object.optional("busyDuringShots") { faults.busyDuringShots = try v.bool() }
        if let v = object.optional("silentAfterFrames") { faults.silentAfterFrames = try v.integer(in: 0...1_000_000) }
        try object.finish()
        return faults
    }
}

/// The simulated camera's test scene: a sphere around the rig drawn procedurally as an
/// equirectangular map (nothing is downloaded or read): sky above the horizon, ground
/// below, a line every 10° (brighter every 30°), and a numbered white marker at every
/// 30° of pan and every 30° of tilt from −60° to 60° (1 at pan −180°, tilt 60°, counting
/// along each row). Seen through a pinhole lens at the rig's pan and tilt, so a frame
/// shows where the rig points: pan 0, tilt 0 has marker 31 in its centre.
///
/// The scene has depth, so a frame shows where the lens is focused: the ground is a plane
/// `eyeHeightMeters` below the lens (near at the bottom of a view that looks down, far at
/// the horizon), the sky and everything on or above the horizon at infinity. Each pixel is
/// blurred in proportion to how far (in dioptres) its depth is from the focus.
public struct SimScenePainter: Sendable {
    public let width: Int
    public let height: Int
    /// Focal length in pixels.
    private let focal: Double
    /// Blur radius, in pixels, per dioptre the depth is off the focus.
    private let blurPerDiopter: Double

    /// How high the lens is above the ground, in metres.
    public static let eyeHeightMeters = 1.5

    public init(width: Int, height: Int, fieldOfViewDegrees: Double) {
        self.width = width
        self.height = height
        focal = Double(width) / 2 / tan(fieldOfViewDegrees * .pi / 360)
        blurPerDiopter = 8 * Double(width) / 640
    }

    /// The depth in dioptres (1 / metres) of what lies at `latitude` (degrees, negative
    /// below the horizon): the ground below, infinity (0) on and above the horizon.
    public static func diopters(latitude: Double) -> Double {
        latitude < 0 ? sin(-latitude * .pi / 180) / eyeHeightMeters : 0
    }

    /// The longitude and latitude (degrees) the view's point (`x` across, `y` down, 0…1)
    /// looks at from `pan`, `tilt`.
    public func direction(panDegrees: Double, tiltDegrees: Double, x: Double, y: Double) -> (longitude: Double, latitude: Double) {
        let (sp, cp) = (sin(panDegrees * .pi / 180), cos(panDegrees * .pi / 180))
        let (st, ct) = (sin(tiltDegrees * .pi / 180), cos(tiltDegrees * .pi / 180))
        return Self.direction(x: (x - 0.5) * Double(width) / focal, y: (0.5 - y) * Double(height) / focal, sp: sp, cp: cp, st: st, ct: ct)
    }

    /// The direction of the ray through the focal-plane point (`x` right, `y` up, at focal
    /// distance 1): tilt about x, then pan about the vertical.
    @inline(__always)
    private static func direction(x: Double, y: Double, sp: Double, cp: Double, st: Double, ct: Double) -> (longitude: Double, latitude: Double) {
        let y1 = y * ct + st
        let z1 = -y * st + ct
        let x2 = x * cp + z1 * sp
        let z2 = -x * sp + z1 * cp
        return (atan2(x2, z2) * 180 / .pi, atan2(y1, (x2 * x2 + z2 * z2).squareRoot()) * 180 / .pi)
    }

    /// The marker number at (pan, tilt) in whole multiples of 30° (tilt −60…60), the
    /// scene's own numbering.
    public static func marker(panDegrees: Int, tiltDegrees: Int) -> Int {
        let column = ((panDegrees + 180) / 30 % 12 + 12) % 12
        let row = (60 - tiltDegrees) / 30
        return row * 12 + column + 1
    }

    /// RGB pixels of the view at `pan`, `tilt` (degrees; pan positive to the right, tilt
    /// positive up), focused at `focusDiopters` (0: infinity; nil: everything sharp).
    public func render(panDegrees: Double, tiltDegrees: Double, focusDiopters: Double? = nil) -> [UInt8] {
        var pixels = [UInt8](repeating: 0, count: width * height * 3)
        // Each pixel's blur radius (pixels), with a focus.
        var blur = [UInt8](repeating: 0, count: focusDiopters == nil ? 0 : width * height)
        var blurred = false
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
                    let (longitude, latitude) = Self.direction(x: x, y: y, sp: sp, cp: cp, st: st, ct: ct)
                    let (r, g, b) = Self.colour(longitude: longitude, latitude: latitude, line: line)
                    out[i] = r
                    out[i + 1] = g
                    out[i + 2] = b
                    if let focusDiopters {
                        let radius = min(30, (abs(Self.diopters(latitude: latitude) - focusDiopters) * blurPerDiopter).rounded())
                        blur[i / 3] = UInt8(radius)
                        blurred = blurred || radius > 0
                    }
                    i += 3
                }
            }
        }
        return blurred
            ? boxMean(pixels) { i in
                let radius = Int(blur[i])
                return (radius, radius)
            } : pixels
    }

    /// How far the view moves across the frame, in pixels (`x` right, `y` down), when the
    /// head turns from one pan and tilt to another (its centre's move: pan by the cosine of
    /// the tilt).
    public func streak(from: (pan: Double, tilt: Double), to: (pan: Double, tilt: Double)) -> (x: Double, y: Double) {
        let perDegree = focal * .pi / 180
        let tilt = (from.tilt + to.tilt) / 2 * .pi / 180
        return ((to.pan - from.pan) * cos(tilt) * perDegree, (from.tilt - to.tilt) * perDegree)
    }

    /// The frame streaked by a move of `streak` pixels during its exposure: each pixel the
    /// mean of the box the streak spans around it (a diagonal streak as its bounding box).
    public func motionBlur(_ pixels: [UInt8], streak: (x: Double, y: Double)) -> [UInt8] {
        let radii = (Int((abs(streak.x) / 2).rounded()), Int((abs(streak.y) / 2).rounded()))
        guard radii != (0, 0) else { return pixels }
        return boxMean(pixels) { _ in radii }
    }

    /// Each pixel the mean of the box of its radii (across, down) around it, nil leaves it
    /// alone (a summed-area table: the same cost for any radius).
    private func boxMean(_ pixels: [UInt8], radii: (Int) -> (Int, Int)?) -> [UInt8] {
        let stride = width + 1
        var sums = [UInt32](repeating: 0, count: stride * (height + 1) * 3)
        for row in 0..<height {
            var run: (UInt32, UInt32, UInt32) = (0, 0, 0)
            for column in 0..<width {
                let p = (row * width + column) * 3
                run.0 += UInt32(pixels[p])
                run.1 += UInt32(pixels[p + 1])
                run.2 += UInt32(pixels[p + 2])
                let above = (row * stride + column + 1) * 3
                let here = ((row + 1) * stride + column + 1) * 3
                sums[here] = sums[above] + run.0
                sums[here + 1] = sums[above + 1] + run.1
                sums[here + 2] = sums[above + 2] + run.2
            }
        }
        var out = pixels
        for row in 0..<height {
            for column in 0..<width {
                guard let (across, down) = radii(row * width + column), across > 0 || down > 0 else { continue }
                let (x0, x1) = (max(0, column - across), min(width, column + across + 1))
                let (y0, y1) = (max(0, row - down), min(height, row + down + 1))
                let count = UInt32((x1 - x0) * (y1 - y0))
                let p = (row * width + column) * 3
                for c in 0..<3 {
                    let total =
                        sums[(y1 * stride + x1) * 3 + c] + sums[(y0 * stride + x0) * 3 + c] - sums[(y0 * stride + x1) * 3 + c]
                        - sums[(y1 * stride + x0) * 3 + c]
                    out[p + c] = UInt8(total / count)
                }
            }
        }
        return out
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
/// second while someone watches, and sleeps while nobody does. A pose it drew last is not
/// drawn again (the same JPEG, stamped anew): a rig at rest costs a stamp a frame. Like a
/// real camera's, its live view pauses for each shot and comes back once the shot is over.
final class SimLiveView: Sendable {
    let feed: LiveViewFeed
    private let config: SimPreviewConfig
    private let painter: SimScenePainter
    /// Where pan and tilt are in the rig's pose (nil: that axis stays at 0).
    private let panIndex: Int?
    private let tiltIndex: Int?
    private let restPose: [Double]
    private let pose = Mutex<(@Sendable () -> CameraPose?)?>(nil)
    private let wake = DispatchSemaphore(value: 0)
    private let started = Atomic<Bool>(false)
    private let frames = Atomic<Int>(0)
    /// Shots under way: the live view waits for them.
    private let shots = Atomic<Int>(0)
    /// The last pose and focus drawn and its JPEG (unstamped).
    private let drawn = Mutex<(pan: Double, tilt: Double, focus: Double, jpeg: [UInt8])?>(nil)
    /// Where the lens is focused, in dioptres (0: infinity, where it starts).
    private let focusDiopters = Mutex<Double>(0)
    /// "Busy" answers to frames asked for during shots (`faults.busyDuringShots`).
    private let busy = Atomic<Int>(0)

    init(config: SimPreviewConfig, axisNames: [String], restPose: [Double]) {
        self.config = config
        feed = LiveViewFeed(stallSeconds: config.stallSeconds)
        painter = SimScenePainter(width: config.width, height: config.height, fieldOfViewDegrees: config.fieldOfViewDegrees)
        panIndex = axisNames.firstIndex(of: "pan") ?? (axisNames.isEmpty ? nil : 0)
        tiltIndex = axisNames.firstIndex(of: "tilt") ?? (axisNames.count > 1 && panIndex != 1 ? 1 : nil)
        self.restPose = restPose
        feed.onWake { [weak self] in self?.poke() }
    }

    func follow(pose provider: @escaping @Sendable () -> CameraPose?) {
        pose.withLock { $0 = provider }
    }

    /// Starts the drawing thread on the first viewer; wakes it after that.
    private func poke() {
        if !started.exchange(true, ordering: .acquiringAndReleasing) {
            SystemThread.start(name: "rig-sim-liveview") { [self] in run() }
        }
        wake.signal()
    }

    /// "Busy" answers so far.
    var busyAnswers: Int { busy.load(ordering: .relaxed) }

    /// One frame now, at the rig's pose: with an exposure, the pose at its start and at its
    /// end, drawn from the middle and streaked by the move between. Stamped with when the
    /// pose was (its start's).
    func frame() -> LiveViewFrame? {
        let start = currentPanTilt()
        let captured = start.at
        var (pan, tilt) = (start.pan, start.tilt)
        var streak = (x: 0.0, y: 0.0)
        if config.exposureSeconds > 0 {
            SystemThread.sleep(seconds: config.exposureSeconds)
            let end = currentPanTilt()
            streak = painter.streak(from: (pan, tilt), to: (end.pan, end.tilt))
            (pan, tilt) = ((pan + end.pan) / 2, (tilt + end.tilt) / 2)
        }
        let moving = abs(streak.x) >= 1 || abs(streak.y) >= 1
        let focus = focusDiopters.withLock { $0 }
        let jpeg: [UInt8]
        if !moving, let last = drawn.withLock({ $0 }), last.pan == pan, last.tilt == tilt, last.focus == focus {
            jpeg = last.jpeg
        } else {
            var pixels = painter.render(panDegrees: pan, tiltDegrees: tilt, focusDiopters: focus)
            if moving { pixels = painter.motionBlur(pixels, streak: streak) }
            guard let encoded = JPEG.encode(rgb: pixels, width: painter.width, height: painter.height, quality: config.quality) else { return nil }
            if !moving { drawn.withLock { $0 = (pan, tilt, focus, encoded) } }
            jpeg = encoded
        }
        let number = frames.add(1, ordering: .relaxed).newValue
        return LiveViewFrame.stamped(jpeg, number: number, capturedNanoseconds: captured)
    }

    /// Tap to focus: the AF point at `cameraX`, `cameraY` of its sensor (`focusGrid`), which
    /// its view shows the middle of: the lens focuses on what lies there from where the rig
    /// points now. The focus, in dioptres.
    func focus(cameraX: Int, cameraY: Int) -> Double {
        let point = config.focusGrid.viewPoint(x: cameraX, y: cameraY, viewAspect: Double(config.width) / Double(config.height))
        let (pan, tilt, _) = currentPanTilt()
        let diopters = SimScenePainter.diopters(latitude: painter.direction(panDegrees: pan, tiltDegrees: tilt, x: point.x, y: point.y).latitude)
        focusDiopters.withLock { $0 = diopters }
        return diopters
    }

    /// Pan and tilt now, and when they were (CLOCK_MONOTONIC ns).
    private func currentPanTilt() -> (pan: Double, tilt: Double, at: UInt64) {
        let sample = pose.withLock { $0 }?()
        let current = sample?.angles ?? restPose
        let pan = panIndex.flatMap { $0 < current.count ? current[$0] : nil } ?? 0
        let tilt = tiltIndex.flatMap { $0 < current.count ? current[$0] : nil } ?? 0
        return (pan, tilt, sample?.atNanoseconds ?? LiveViewFrame.now())
    }

    /// A shot begins: no frame until it is over, `seconds` from now (the simulated camera
    /// confirms its shot when the player's time for it is up).
    func pauseForShot(seconds: Double) {
        shots.add(1, ordering: .acquiringAndReleasing)
        if feed.state == .on { feed.set(.paused) }
        DispatchQueue.global().asyncAfter(deadline: .now() + max(0, seconds)) { [self] in
            shots.subtract(1, ordering: .acquiringAndReleasing)
            wake.signal()
        }
    }

    private func run() {
        let period = 1 / config.fps
        let faults = config.faults
        var stalled = false
        while feed.state != .closed {
            let shooting = shots.load(ordering: .acquiring) > 0
            guard feed.isWanted, !shooting || faults.busyDuringShots else {
                if !feed.isWanted { feed.set(.off) }
                wake.wait()
                continue
            }
            if shooting {
                // Asked during the shot: "busy", as a camera answers; asked again shortly.
                busy.add(1, ordering: .relaxed)
                _ = wake.wait(timeout: .now() + 0.05)
                continue
            }
            let made = frames.load(ordering: .relaxed)
            if let after = faults.silentAfterFrames, made >= after {
                // It never answers again: the thread waits for the run's end.
                while feed.state != .closed { wake.wait() }
                return
            }
            if let after = faults.stallAfterFrames, !stalled, made >= after {
                stalled = true
                let until = DispatchTime.now() + faults.stallSeconds
                while DispatchTime.now() < until, feed.state != .closed { _ = wake.wait(timeout: until) }
                continue
            }
            let began = DispatchTime.now()
            if let frame = frame() {
                feed.publish(frame)
                // A shot began meanwhile: this frame is from before it, still true.
                if shots.load(ordering: .acquiring) > 0 { feed.set(.paused) }
            } else {
                feed.set(.failed("libjpeg-turbo could not encode the frame"))
            }
            // Until the next frame is due; a wake (a viewer left) only ends the wait early.
            let due = began + period
            while DispatchTime.now() < due, feed.isWanted {
                _ = wake.wait(timeout: due)
            }
        }
    }
}
