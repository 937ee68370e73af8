import Dispatch
import Glibc
import RigCore
import RigFormat
import Synchronization

/// A frame's 8-bit luma, row by row.
public struct LumaImage: Sendable, Equatable {
    public var width: Int
    public var height: Int
    public var pixels: [UInt8]

    public init(width: Int, height: Int, pixels: [UInt8]) {
        self.width = width
        self.height = height
        self.pixels = pixels
    }
}

/// How far a frame's content moved from the previous frame's, in pixels (`x` right, `y`
/// down), and how sure the estimate is (`peak`: the phase correlation's peak, near 1 for
/// two frames that are shifts of each other, near 0 when nothing matches).
public struct ImageShift: Sendable, Equatable {
    public var x: Double
    public var y: Double
    public var peak: Double
}

/// The image shift between consecutive frames by phase correlation: the middle of each
/// frame (a power-of-two window, at most `maxSize` a side), its mean taken off and a Hann
/// window applied, the normalized cross-power spectrum of two frames (weighted toward its
/// lower frequencies) transformed back, its peak the shift in whole pixels; then the new frame's window moved by them (a window
/// that stays put pulls the estimate toward no shift) and the fraction of a pixel from the
/// cross-power spectrum's phase (a weighted least-squares plane through its lower
/// frequencies). Shifts up to half the window wrap, so up to about a quarter of it are
/// trusted. The last frame's spectrum is kept: each new frame costs two forward transforms
/// (one when it did not move) and one inverse. One thread feeds it.
public final class PhaseCorrelator {
    public let windowWidth: Int
    public let windowHeight: Int
    /// Below this peak the shift is not trusted (a view with nothing to see, a frame
    /// smeared by a fast move, another scene).
    public static let minimumPeak = 0.15
    private let hannX: [Double]
    private let hannY: [Double]
    /// Per frequency bin: a Gaussian low-pass (σ an eighth of the window a side), and its sum.
    private let lowPass: [Double]
    private let lowPassSum: Double
    private let fftX: FFT
    private let fftY: FFT
    private var previous: (re: [Double], im: [Double])?
    private var current: (re: [Double], im: [Double])
    private var product: (re: [Double], im: [Double])
    /// This frame's window moved with the content.
    private var moved: (re: [Double], im: [Double])
    /// One column's real and imaginary parts (two properties: one access each).
    private var columnRe: [Double]
    private var columnIm: [Double]

    /// For frames of `width` × `height` (the largest power-of-two window that fits, at
    /// most `maxSize`); nil when the frames are smaller than 16 × 16.
    public init?(width: Int, height: Int, maxSize: Int = 256) {
        func fit(_ n: Int) -> Int {
            var size = 1
            while size * 2 <= min(n, maxSize) { size *= 2 }
            return size
        }
        windowWidth = fit(width)
        windowHeight = fit(height)
        guard windowWidth >= 16, windowHeight >= 16 else { return nil }
        func hann(_ n: Int) -> [Double] { (0..<n).map { 0.5 - 0.5 * cos(2 * .pi * (Double($0) + 0.5) / Double(n)) } }
        hannX = hann(windowWidth)
        hannY = hann(windowHeight)
        fftX = FFT(size: windowWidth)
        fftY = FFT(size: windowHeight)
        let zeros = [Double](repeating: 0, count: windowWidth * windowHeight)
        let (w, h) = (windowWidth, windowHeight)
        lowPass = (0..<(w * h)).map { k in
            let (u, v) = (Double(k % w <= w / 2 ? k % w : k % w - w), Double(k / w <= h / 2 ? k / w : k / w - h))
            let (su, sv) = (Double(w) / 8, Double(h) / 8)
            return exp(-(u * u / (su * su) + v * v / (sv * sv)) / 2)
        }
        lowPassSum = lowPass.reduce(0, +)
        current = (zeros, zeros)
        product = (zeros, zeros)
        moved = (zeros, zeros)
        columnRe = [Double](repeating: 0, count: windowHeight)
        columnIm = columnRe
    }

    /// Forgets the last frame (the next one starts a new pair).
    public func reset() { previous = nil }

    /// The shift of `frame`'s content from the last frame's; nil for the first frame, a
    /// frame too small for the window, or a peak below `minimumPeak`.
    public func push(_ frame: LumaImage) -> ImageShift? {
        guard frame.width >= windowWidth, frame.height >= windowHeight, frame.pixels.count >= frame.width * frame.height else {
            previous = nil
            return nil
        }
        let (w, h) = (windowWidth, windowHeight)
        let x0 = (frame.width - w) / 2
        let y0 = (frame.height - h) / 2
        load(frame, x: x0, y: y0, into: &current)
        guard let last = previous else {
            previous = current
            current = (product.re.map { _ in 0 }, product.im.map { _ in 0 })
            return nil
        }
        // This frame is the next one's last; the last one's buffers are reused.
        defer {
            previous = current
            current = last
        }
        // conj(last) · current, normalized and weighted toward the lower frequencies (a
        // JPEG's 8-pixel blocks stay put as the content moves, and whitened they would pull
        // the peak to a multiple of 8): its inverse transform peaks at the shift.
        for k in 0..<(w * h) {
            let a = last.re[k] * current.re[k] + last.im[k] * current.im[k]
            let b = last.re[k] * current.im[k] - last.im[k] * current.re[k]
            let m = (a * a + b * b).squareRoot()
            let g = lowPass[k]
            product.re[k] = m > 1e-12 ? g * a / m : 0
            product.im[k] = m > 1e-12 ? g * b / m : 0
        }
        transform(&product, inverse: true)
        var best = 0
        for k in 1..<(w * h) where product.re[k] > product.re[best] { best = k }
        let scale = 1 / lowPassSum
        func c(_ col: Int, _ row: Int) -> Double { product.re[((row + h) % h) * w + (col + w) % w] * scale }
        let (bx, by) = (best % w, best / w)
        let strength = c(bx, by)
        guard strength >= Self.minimumPeak else { return nil }
        let (ix, iy) = (bx > w / 2 ? bx - w : bx, by > h / 2 ? by - h : by)
        // The window moved with the content (as far as the frame allows): a window that
        // stays put pulls the estimate toward no shift.
        let ox = min(max(ix, -x0), frame.width - w - x0)
        let oy = min(max(iy, -y0), frame.height - h - y0)
        if ox != 0 || oy != 0 {
            load(frame, x: x0 + ox, y: y0 + oy, into: &moved)
        } else {
            moved = current
        }
        let (fx, fy) = fraction(last, moved, whole: (ix - ox, iy - oy))
        return ImageShift(x: Double(ix) + fx, y: Double(iy) + fy, peak: strength)
    }

    /// The window at (`x`, `y`) of `frame`, less its mean, Hann-weighted, transformed.
    private func load(_ frame: LumaImage, x: Int, y: Int, into data: inout (re: [Double], im: [Double])) {
        let (w, h) = (windowWidth, windowHeight)
        var sum = 0
        for row in 0..<h {
            let base = (y + row) * frame.width + x
            for col in 0..<w { sum += Int(frame.pixels[base + col]) }
        }
        let mean = Double(sum) / Double(w * h)
        for row in 0..<h {
            let base = (y + row) * frame.width + x
            for col in 0..<w {
                data.re[row * w + col] = (Double(frame.pixels[base + col]) - mean) * hannX[col] * hannY[row]
                data.im[row * w + col] = 0
            }
        }
        transform(&data, inverse: false)
    }

    /// The shift's fraction of a pixel between two spectra `whole` pixels apart: with the
    /// whole pixels taken off, the cross-power spectrum's phase at frequency (u, v) is
    /// −2π(u·fx/w + v·fy/h); a least-squares plane through the lower half of the
    /// frequencies, weighted by their energy. (0, 0) when it is not within a pixel.
    private func fraction(
        _ last: (re: [Double], im: [Double]), _ next: (re: [Double], im: [Double]), whole: (Int, Int)
    ) -> (Double, Double) {
        let (w, h) = (windowWidth, windowHeight)
        var (suu, suv, svv, sup, svp) = (0.0, 0.0, 0.0, 0.0, 0.0)
        for vi in 0..<h {
            let v = vi <= h / 2 ? vi : vi - h
            guard abs(v) <= h / 4 else { continue }
            for ui in 0..<w {
                let u = ui <= w / 2 ? ui : ui - w
                guard abs(u) <= w / 4, u != 0 || v != 0 else { continue }
                let k = vi * w + ui
                let a = last.re[k] * next.re[k] + last.im[k] * next.im[k]
                let b = last.re[k] * next.im[k] - last.im[k] * next.re[k]
                let weight = (a * a + b * b).squareRoot()
                let (p, q) = (2 * Double.pi * Double(u) / Double(w), 2 * Double.pi * Double(v) / Double(h))
                let theta = p * Double(whole.0) + q * Double(whole.1)
                let residual = atan2(b * cos(theta) + a * sin(theta), a * cos(theta) - b * sin(theta))
                suu += weight * p * p
                suv += weight * p * q
                svv += weight * q * q
                sup -= weight * p * residual
                svp -= weight * q * residual
            }
        }
        let det = suu * svv - suv * suv
        guard det > 0 else { return (0, 0) }
        let (fx, fy) = ((sup * svv - svp * suv) / det, (svp * suu - sup * suv) / det)
        return abs(fx) <= 1 && abs(fy) <= 1 ? (fx, fy) : (0, 0)
    }

    /// The 2-D transform in place: every row, then every column.
    private func transform(_ data: inout (re: [Double], im: [Double]), inverse: Bool) {
        let (w, h) = (windowWidth, windowHeight)
        data.re.withUnsafeMutableBufferPointer { re in
            data.im.withUnsafeMutableBufferPointer { im in
                for row in 0..<h {
                    fftX.run(re: re.baseAddress! + row * w, im: im.baseAddress! + row * w, inverse: inverse)
                }
                columnRe.withUnsafeMutableBufferPointer { cre in
                    columnIm.withUnsafeMutableBufferPointer { cim in
                        for col in 0..<w {
                            for row in 0..<h {
                                cre[row] = re[row * w + col]
                                cim[row] = im[row * w + col]
                            }
                            fftY.run(re: cre.baseAddress!, im: cim.baseAddress!, inverse: inverse)
                            for row in 0..<h {
                                re[row * w + col] = cre[row]
                                im[row * w + col] = cim[row]
                            }
                        }
                    }
                }
            }
        }
    }
}

/// A radix-2 complex FFT of one power-of-two size (unnormalized both ways), its twiddles
/// and bit reversal computed once.
struct FFT {
    let size: Int
    private let cosines: [Double]
    private let sines: [Double]
    private let reversed: [Int]

    init(size: Int) {
        self.size = size
        cosines = (0..<(size / 2)).map { cos(2 * .pi * Double($0) / Double(size)) }
        sines = (0..<(size / 2)).map { sin(2 * .pi * Double($0) / Double(size)) }
        var bits = 0
        while 1 << bits < size { bits += 1 }
        reversed = (0..<size).map { i in
            var r = 0
            for b in 0..<bits where i & (1 << b) != 0 { r |= 1 << (bits - 1 - b) }
            return r
        }
    }

    func run(re: UnsafeMutablePointer<Double>, im: UnsafeMutablePointer<Double>, inverse: Bool) {
        for i in 0..<size {
            let j = reversed[i]
            if j > i {
                swap(&re[i], &re[j])
                swap(&im[i], &im[j])
            }
        }
        let sign = inverse ? 1.0 : -1.0
        var length = 2
        while length <= size {
            let half = length / 2
            let stride = size / length
            var start = 0
            while start < size {
                for k in 0..<half {
                    let wr = cosines[k * stride]
                    let wi = sign * sines[k * stride]
                    let a = start + k
                    let b = a + half
                    let tr = re[b] * wr - im[b] * wi
                    let ti = re[b] * wi + im[b] * wr
                    re[b] = re[a] - tr
                    im[b] = im[a] - ti
                    re[a] += tr
                    im[a] += ti
                }
                start += length
            }
            length *= 2
        }
    }
}

/// The camera's motion measured between its live-view frames (`"settle": {"sensor":
/// "liveView"}`, and `rig calibrate resonance` without an IMU): a thread of its own takes
/// each newest frame from the camera's `LiveViewFeed` (it is a viewer: the live view runs
/// while it is there), decodes its luma at a reduced scale (libjpeg-turbo, `JPEG.luma`),
/// finds the shift from the frame before (`PhaseCorrelator`) and turns it into the angle
/// the camera turned (the view's horizontal field of view: focal length in pixels) over
/// the frames' capture times. The control loop reads the latest rate under a lock, without
/// allocating. A reading counts only while fresh: no frame pair for longer than two frame
/// intervals (and 50 ms for the decoding) is no reading, which a settle counts as motion;
/// for a settle, a pair whose first frame was captured before the loop last commanded a
/// move is no reading either (it shows the rig before it stopped). Rotation about the lens's
/// axis (roll) is not seen.
public final class LiveViewMotion: StillnessProbe, RateSensor, SessionPart, @unchecked Sendable {
    /// The latest pair's rates and times.
    private struct Reading {
        /// Degrees per second the camera turns, to the right and up as the view sees it.
        var right = Double.nan
        var up = Double.nan
        /// Capture times of the pair's two frames (CLOCK_MONOTONIC ns; 0: none yet).
        var older: UInt64 = 0
        var newer: UInt64 = 0
        /// The typical time between frames, ns.
        var intervalNs: UInt64 = 0
        /// When the loop last commanded motion (ns).
        var lastCommandedMotion: UInt64 = 0
    }

    private let feed: LiveViewFeed
    private let fieldOfViewDegrees: Double
    private let speed: Double
    private let name: String
    private let reading = Mutex(Reading())
    private let stopping = Atomic<Bool>(false)
    private let pairs = Atomic<Int>(0)
    private let running = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)
    private let clock = MonotonicClock()

    /// - Parameters:
    ///   - feed: the camera's live view.
    ///   - fieldOfViewDegrees: the view's horizontal field of view (its lens).
    ///   - speed: the loop's `--speed` (the simulator): rates are in the loop's time.
    ///   - name: what the camera is, for the screen.
    public init(feed: LiveViewFeed, fieldOfViewDegrees: Double, speed: Double = 1, name: String = "the camera") {
        self.feed = feed
        self.fieldOfViewDegrees = fieldOfViewDegrees
        self.speed = speed
        self.name = name
    }

    /// Frame pairs measured so far.
    public var pairsMeasured: Int { pairs.load(ordering: .relaxed) }

    /// The last pair's rates (°/s: the camera's turn to the right and up), however old;
    /// nil before the first pair (for tests and benches).
    public var latest: (right: Double, up: Double)? {
        reading.withLock { r in r.newer > 0 ? (r.right, r.up) : nil }
    }

    /// How old a reading may be at most: two frame intervals and 50 ms for the decoding
    /// (a second before the interval is known).
    private static func staleAfter(_ r: Reading) -> UInt64 {
        r.intervalNs == 0 ? 1_000_000_000 : 2 * r.intervalNs + 50_000_000
    }

    // MARK: StillnessProbe (the loop thread)

    public func commanded(moving: Bool) {
        guard moving else { return }
        let now = clock.now()
        reading.withLock { $0.lastCommandedMotion = now }
    }

    public func rateDegreesPerSecond() -> Double? {
        let now = clock.now()
        return reading.withLock { r -> Double? in
            guard r.newer > 0, now &- r.newer <= Self.staleAfter(r), r.older >= r.lastCommandedMotion, r.right.isFinite, r.up.isFinite else {
                return nil
            }
            return (r.right * r.right + r.up * r.up).squareRoot()
        }
    }

    // MARK: RateSensor

    public var sensorName: String { "\(name)'s live view (motion between frames, \(fixed(fieldOfViewDegrees, 1))° wide)" }
    public var componentNames: [String] { ["the view's turn right", "the view's turn up", "-"] }
    /// The ring-down starts this long after the move: the first pairs after it show the
    /// move's end.
    public var lagSeconds: Double { 2 * Double(reading.withLock { $0.intervalNs }) / 1e9 + 0.05 }

    public func rates() -> SIMD3<Double>? {
        let now = clock.now()
        return reading.withLock { r -> SIMD3<Double>? in
            // A ring-down is sampled and held at the loop's rate: a frame late under load
            // holds the last pair a little longer (four intervals and 0.2 s at most).
            guard r.newer > 0, now &- r.newer <= 2 * Self.staleAfter(r) + 100_000_000, r.right.isFinite, r.up.isFinite else { return nil }
            return SIMD3(r.right, r.up, 0)
        }
    }

    /// Joins the live view and starts measuring; a camera whose live view cannot run fails.
    public func start() throws(PartStartFailure) {
        guard !running.exchange(true, ordering: .acquiringAndReleasing) else { return }
        guard let slot = feed.join() else {
            running.store(false, ordering: .releasing)
            throw PartStartFailure(
                part: "live view", cause: .unavailable, detail: "\(name) shows no live view: \(feed.state.problem ?? LiveViewFeed.noLiveView)")
        }
        stopping.store(false, ordering: .relaxed)
        let started = SystemThread.start(name: "rig-lv-motion") { [self] in
            measure(slot)
            feed.leave(slot)
            finished.signal()
        }
        guard started == 0 else {
            feed.leave(slot)
            running.store(false, ordering: .releasing)
            throw PartStartFailure(
                part: "live view", cause: .unavailable, detail: "no thread to measure the live view (pthread_create: \(String(cString: strerror(started))))")
        }
    }

    public func close() {
        guard running.exchange(false, ordering: .acquiringAndReleasing) else { return }
        stopping.store(true, ordering: .relaxed)
        finished.wait()
    }

    // MARK: SessionPart (a measured settle in a session: after the camera)

    public var partName: String { "live view" }
    public func start(_ door: SessionDoor) throws(PartStartFailure) { try start() }
    public func finish(_ outcome: SessionOutcome) { close() }

    /// The measuring thread: until the feed ends or `close`.
    private func measure(_ slot: LiveViewSlot) {
        var correlator: PhaseCorrelator?
        var focalPixels = 0.0
        var last: (number: Int, captured: UInt64)?
        var interval = 0.0
        while !stopping.load(ordering: .relaxed) {
            guard let frame = slot.next(within: 0.2) else {
                if slot.isClosed { return }
                continue
            }
            guard let luma = JPEG.luma(frame.jpeg, minWidth: 256) else {
                correlator?.reset()
                last = nil
                continue
            }
            if correlator == nil || correlator?.windowWidth ?? 0 > luma.width || correlator?.windowHeight ?? 0 > luma.height {
                correlator = PhaseCorrelator(width: luma.width, height: luma.height)
                focalPixels = Double(luma.width) / 2 / tan(fieldOfViewDegrees * .pi / 360)
                last = nil
            }
            guard let correlator else { continue }
            let shift = correlator.push(luma)
            defer { last = (frame.number, frame.capturedNanoseconds) }
            guard let last, frame.capturedNanoseconds > last.captured else { continue }
            let seconds = Double(frame.capturedNanoseconds - last.captured) / 1e9
            // A gap (a shot paused the live view): the pair says nothing of the rate now.
            if interval > 0, seconds > 4 * interval { continue }
            interval = interval == 0 ? seconds : 0.8 * interval + 0.2 * seconds
            // The view's content moves left as the camera turns right, down as it turns up.
            let (right, up) =
                shift.map { s in
                    (-atan(s.x / focalPixels) * 180 / .pi / seconds / speed, atan(s.y / focalPixels) * 180 / .pi / seconds / speed)
                } ?? (.nan, .nan)
            reading.withLock { r in
                r.right = right
                r.up = up
                r.older = last.captured
                r.newer = frame.capturedNanoseconds
                r.intervalNs = UInt64(interval * 1e9)
            }
            pairs.add(1, ordering: .relaxed)
        }
    }
}

/// Why the live view cannot measure the camera's motion (a one-line reason).
public struct LiveViewMotionUnavailable: Error, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    public var description: String
    public init(description: String) { self.description = description }
    public init(stringLiteral description: String) { self.description = description }
}

extension LiveViewMotion {
    /// The live-view motion sensor of `camera`, or why there is none: no camera, a camera
    /// without a live view (a `"gpio"` one, a `"sim"` one without `"preview"`), or no field
    /// of view to turn pixels into degrees (`fieldOfViewDegrees`, else the camera's own).
    /// Nothing is started.
    public static func of(camera: Camera?, fieldOfViewDegrees: Double?, speed: Double = 1) -> Result<LiveViewMotion, LiveViewMotionUnavailable> {
        guard let camera else { return .failure(LiveViewMotionUnavailable(description: "the rig has no camera, so no live view to measure")) }
        guard let source = camera as? LiveViewSource else {
            return .failure(LiveViewMotionUnavailable(description: "the \(camera.label) has no live view"))
        }
        if case .unsupported(let why) = source.liveView.state { return .failure(LiveViewMotionUnavailable(description: why)) }
        guard let fov = fieldOfViewDegrees ?? source.liveViewFieldOfViewDegrees else {
            return .failure(
                LiveViewMotionUnavailable(
                    description: "the live view's field of view is unknown: give the lens's horizontal field of view as \"fovDeg\" in \"settle\""))
        }
        return .success(LiveViewMotion(feed: source.liveView, fieldOfViewDegrees: fov, speed: speed, name: "the \(camera.label)"))
    }
}

/// A `"liveView"` settle where one session plays many programs (`rig serve`): the camera's
/// live view is joined and measured only while a program plays (`begin` … `end`), so an
/// idle server decodes nothing and leaves a real camera's viewfinder alone. The loop's
/// stillness probe for the whole session; between programs it has no reading.
public final class LiveViewStillnessOnDemand: StillnessProbe, @unchecked Sendable {
    private let fieldOfViewDegrees: Double?
    private let speed: Double
    private let current = Mutex<LiveViewMotion?>(nil)

    /// - Parameters:
    ///   - fieldOfViewDegrees: the settle's `"fovDeg"` (nil: the camera's own).
    ///   - speed: the loop's `--speed`.
    public init(fieldOfViewDegrees: Double?, speed: Double = 1) {
        self.fieldOfViewDegrees = fieldOfViewDegrees
        self.speed = speed
    }

    /// Joins `camera`'s live view for a program (ending what an earlier one left): what
    /// measures, or why nothing can (each step then waits its timeout and its fixed settle).
    public func begin(camera: Camera?) -> Result<String, LiveViewMotionUnavailable> {
        end()
        switch LiveViewMotion.of(camera: camera, fieldOfViewDegrees: fieldOfViewDegrees, speed: speed) {
        case .success(let motion):
            do { try motion.start() } catch { return .failure(LiveViewMotionUnavailable(description: error.detail)) }
            current.withLock { $0 = motion }
            return .success(motion.sensorName)
        case .failure(let why): return .failure(why)
        }
    }

    /// Leaves the live view (the program ended); waits for the measuring thread.
    public func end() {
        current.withLock { motion -> LiveViewMotion? in
            defer { motion = nil }
            return motion
        }?.close()
    }

    /// Measuring now (a program plays and its live view runs).
    public var isMeasuring: Bool { current.withLock { $0 != nil } }

    public func commanded(moving: Bool) { current.withLock { $0 }?.commanded(moving: moving) }
    public func rateDegreesPerSecond() -> Double? { current.withLock { $0 }?.rateDegreesPerSecond() }
}
