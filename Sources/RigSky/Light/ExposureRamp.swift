import FoundationEssentials
import Glibc
import RigFormat
import Synchronization

/// How a timelapse's exposure follows the light (`"ramp"` in `shoot`): keyed by frame,
/// planned from the sun's altitude, or held to a target brightness from each frame's
/// measure; within the camera's limits, changing the total exposure by at most `maxStepEV`
/// a frame (and `maxEVPerHour`) and (in 1/3-stop mode) at most once every
/// `minFramesBetweenChanges` frames.
public struct ExposureRamp: Sendable, Equatable {
    public enum Source: Sendable, Equatable {
        /// EV100 of the settings by frame (0-based), interpolated in EV.
        case keys(frames: [Double], evs: [Double])
        /// The day settings' EV100 with the sun at or above `dayAltitude`, the night's at or
        /// below `nightAltitude`, in between blended on the clear sky's brightness
        /// (`sunBlend`). Frame 0 at `startUnix`.
        case sun(dayEV: Double, nightEV: Double, startUnix: Double, site: Site)
        /// Hold the measured brightness (EV from mid-grey) at `targetEV`, starting from `startEV`.
        case auto(targetEV: Double, startEV: Double)
    }

    /// The closed loop's settings (`"mode": "auto"`).
    public struct Loop: Sendable, Equatable {
        /// The window the loop reads the scene's trend in: a change shorter than about half
        /// of it (a cloud, headlights) is left alone; a lasting one is followed after about
        /// half of it. The trade-off: longer ignores longer clouds and follows later.
        public var windowSeconds = 180.0
        /// Added to the target in the dark (night should look like night): none with the
        /// scene at EV 4 or brighter, all of it at EV −2 or darker, smooth between.
        public var nightOffsetEV = 0.0
        /// Highlight protection: with more than this fraction of the frame clipped white
        /// (the median of the last 30 s), the exposure is lowered (0.5 EV a minute, by at
        /// most `highlightMaxEV`) and given back (0.25 EV a minute) once under half of it.
        public var maxClipped: Double?
        public var highlightMaxEV = 1.0

        public init(windowSeconds: Double = 180, nightOffsetEV: Double = 0, maxClipped: Double? = nil, highlightMaxEV: Double = 1) {
            self.windowSeconds = windowSeconds
            self.nightOffsetEV = nightOffsetEV
            self.maxClipped = maxClipped
            self.highlightMaxEV = highlightMaxEV
        }
    }

    public var source: Source
    public var limits: ExposureLimits
    /// The largest change of total exposure from one frame to the next.
    public var maxStepEV: Double
    /// In 1/3-stop mode: frames to wait after a change before the next.
    public var minFramesBetweenChanges: Int
    /// The fastest the exposure may change, EV per hour of the run; nil: `autoEVPerHour`
    /// for `auto`, no limit for a plan.
    public var maxEVPerHour: Double?
    public var loop: Loop

    public static let dayAltitude = 6.0
    public static let nightAltitude = -14.0
    /// The closed loop's rate limit unless the ramp gives one: 1 EV a minute (0.083 EV a
    /// frame at 5 s), over twice the clear sky's fastest fall at the equator.
    public static let autoEVPerHour = 60.0

    public init(
        source: Source, limits: ExposureLimits = ExposureLimits(), maxStepEV: Double = 1.0 / 3, minFramesBetweenChanges: Int = 1,
        maxEVPerHour: Double? = nil, loop: Loop = Loop()
    ) {
        self.source = source
        self.limits = limits
        self.maxStepEV = maxStepEV
        self.minFramesBetweenChanges = minFramesBetweenChanges
        self.maxEVPerHour = maxEVPerHour
        self.loop = loop
    }

    /// The rate limit in force (EV per hour), if any.
    public var evPerHour: Double? {
        if let maxEVPerHour { return maxEVPerHour }
        if case .auto = source { return Self.autoEVPerHour }
        return nil
    }

    /// How far from the day's exposure toward the night's a sun ramp is with the sun at
    /// `altitude` (geometric degrees): 0 at `dayAltitude` and above, 1 at `nightAltitude`
    /// and below, in between the share of the clear sky's fall (`Sky.clearSkyEV`) between
    /// them, so the exposure moves as the light does (little near the day's end, most
    /// between −2° and −10°). Smooth: no step at −2° or anywhere.
    public static func sunBlend(altitude: Double) -> Double {
        let day = Sky.clearSkyEV(sunAltitude: dayAltitude)
        let night = Sky.clearSkyEV(sunAltitude: nightAltitude)
        return min(1, max(0, (day - Sky.clearSkyEV(sunAltitude: altitude)) / (day - night)))
    }

    /// The open-loop plan's EV100 for a frame taken `seconds` into the run; nil for `auto`.
    public func plannedEV(frame: Int, seconds: Double) -> Double? {
        switch source {
        case .keys(let frames, let evs):
            guard let first = frames.first, let last = frames.last else { return nil }
            let f = Double(frame)
            if f <= first { return evs.first }
            if f >= last { return evs.last }
            let i = frames.lastIndex { $0 <= f } ?? 0
            let u = (f - frames[i]) / max(frames[i + 1] - frames[i], 1e-9)
            return evs[i] + (evs[i + 1] - evs[i]) * u
        case .sun(let day, let night, let start, let site):
            // The geometric altitude: refraction stops at −2° (its formula does not hold
            // below), which made the planned exposure jump 0.3 EV twice as the sun passed it.
            let altitude = Sky.position(of: .sun, at: start + seconds, site: site, refraction: false).altitude
            return day + (night - day) * Self.sunBlend(altitude: altitude)
        case .auto:
            return nil
        }
    }
}

/// The photographer's nudge during a shoot: ± EV on the ramp's exposure (positive
/// brighter), set from the phone (`rig serve`) or the keyboard (`rig play`) while the ramp
/// reads it on its own thread. The ramp moves to a new nudge smoothly
/// (`ExposureRampRunner.nudgeEVPerMinute`).
public final class RampNudge: Sendable {
    public static let range = -3.0...3.0
    /// One press of `+` or `-`.
    public static let stepEV = 1.0 / 3
    private let value: Mutex<Double>

    public init(_ ev: Double = 0) { value = Mutex(min(max(ev, Self.range.lowerBound), Self.range.upperBound)) }

    public var ev: Double { value.withLock { $0 } }

    /// Sets the nudge (held to `range`); returns it.
    @discardableResult public func set(_ ev: Double) -> Double {
        let held = min(max(ev.isFinite ? ev : 0, Self.range.lowerBound), Self.range.upperBound)
        value.withLock { $0 = held }
        return held
    }

    /// Moves `nudge` (nil: no ramp) by a key's `delta` and says what it is now, for the
    /// keyboard's reply line.
    public static func keyReply(_ nudge: RampNudge?, by delta: Double) -> String {
        guard let nudge else { return "no exposure ramp to nudge: + and - move a ramp's exposure" }
        let ev = nudge.add(delta)
        let shown = abs(ev) < 0.005 ? "0" : (ev > 0 ? "+" : "") + fixed(ev, 2)
        return "exposure nudge \(shown) EV (the ramp takes it up at 1 EV a minute)"
    }

    /// Adds to the nudge (held to `range`); returns it.
    @discardableResult public func add(_ delta: Double) -> Double {
        value.withLock { v in
            v = min(max(v + (delta.isFinite ? delta : 0), Self.range.lowerBound), Self.range.upperBound)
            return v
        }
    }
}

/// Turns a ramp into each frame's settings as the frames come: the plan (or, for `auto`,
/// the controller) gives the wanted EV; the nudge, the rate limit, the 1/3-stop schedule
/// and the camera's limits give what is shot.
public struct ExposureRampRunner: Sendable {
    public let ramp: ExposureRamp
    /// The nudge this runner reads (shared with whoever sets it).
    public let nudge: RampNudge
    private var controller: AutoRampController?
    /// The EV100 of the settings last shot.
    public private(set) var currentEV: Double?
    /// The nudge as applied so far: it follows `nudge.ev` at `nudgeEVPerMinute`.
    public private(set) var appliedNudgeEV = 0.0
    private var framesSinceChange = Int.max / 2
    private var lastSeconds: Double?
    private var lastChangeSeconds: Double?

    /// How fast the ramp takes up a new nudge.
    public static let nudgeEVPerMinute = 1.0

    public init(_ ramp: ExposureRamp, nudge: RampNudge = RampNudge()) {
        self.ramp = ramp
        self.nudge = nudge
        if case .auto(let target, _) = ramp.source { controller = AutoRampController(targetEV: target, loop: ramp.loop) }
    }

    /// The settings of frame `frame` (0-based), taken `seconds` into the run.
    public mutating func settings(frame: Int, seconds: Double) -> ExposureSettings {
        let dt = lastSeconds.map { max(0, seconds - $0) }
        let nudgeStep = dt.map { $0 * Self.nudgeEVPerMinute / 60 } ?? .infinity
        appliedNudgeEV += min(max(nudge.ev - appliedNudgeEV, -nudgeStep), nudgeStep)
        var wanted: Double
        if case .auto(_, let start) = ramp.source {
            wanted = controller?.nextEV(current: currentEV ?? start, seconds: seconds, nudgeEV: appliedNudgeEV) ?? start
        } else {
            // A brighter nudge is a lower settings EV.
            wanted = (ramp.plannedEV(frame: frame, seconds: seconds) ?? 0) - appliedNudgeEV
        }
        wanted = min(max(wanted, ramp.limits.evRange.lowerBound), ramp.limits.evRange.upperBound)
        var maxStep = ramp.maxStepEV
        if let rate = ramp.evPerHour, let dt { maxStep = min(maxStep, rate * dt / 3600) }
        var ev = wanted
        if let current = currentEV {
            if ramp.limits.bulb {
                ev = current + min(max(wanted - current, -maxStep), maxStep)
            } else {
                // 1/3 stops: change only by whole thirds, and not too often (nor faster than the rate).
                let thirds = ((wanted - current) * 3).rounded()
                let rateAllows = ramp.evPerHour.map { rate in (seconds - (lastChangeSeconds ?? -.infinity)) * rate / 3600 >= 1.0 / 3 - 1e-9 } ?? true
                if thirds == 0 || framesSinceChange < ramp.minFramesBetweenChanges || !rateAllows {
                    ev = current
                } else {
                    let step = min(abs(thirds) / 3, max(1.0 / 3, (ramp.maxStepEV * 3).rounded(.down) / 3))
                    ev = current + (thirds > 0 ? step : -step)
                }
            }
        } else if !ramp.limits.bulb {
            ev = (wanted * 3).rounded() / 3
        }
        let changed = currentEV.map { abs($0 - ev) > 1e-9 } ?? true
        framesSinceChange = changed ? 0 : framesSinceChange + 1
        if changed { lastChangeSeconds = seconds }
        lastSeconds = seconds
        currentEV = ev
        return ramp.limits.settings(forEV: ev)
    }

    /// A resumed run's ramp goes on where the stopped one was: from the EV of its last
    /// frame (`lastEV`), and, for `auto`, with the measures of the frames before (their
    /// scene EV, clipped fraction and time, in seconds before this run began as negative
    /// times) in its trend, so it neither jumps back to `startEV` nor waits a window.
    public mutating func resume(lastEV: Double, measures: [(seconds: Double, sceneEV: Double, clippedHigh: Double)]) {
        currentEV = min(max(lastEV, ramp.limits.evRange.lowerBound), ramp.limits.evRange.upperBound)
        framesSinceChange = Int.max / 2
        for measure in measures.sorted(by: { $0.seconds < $1.seconds }) {
            controller?.observe(sceneEV: measure.sceneEV, clippedHigh: measure.clippedHigh, seconds: measure.seconds)
        }
    }

    /// A frame's measure, for `auto`: its brightness (EV from mid-grey), the settings it was
    /// shot with, the fraction clipped white, and when it was shot (seconds into the run).
    public mutating func measured(_ brightness: Double, settingsEV: Double, clippedHigh: Double = 0, seconds: Double) {
        controller?.observe(sceneEV: settingsEV + brightness, clippedHigh: clippedHigh, seconds: seconds)
    }

    /// The brightness (EV from mid-grey) the ramp aims at for a scene of `sceneEV`: the
    /// target with the night offset and the applied nudge (and the highlight protection so
    /// far); a plan aims at mid-grey plus the nudge.
    public func targetBrightness(sceneEV: Double) -> Double {
        controller?.targetBrightness(sceneEV: sceneEV, nudgeEV: appliedNudgeEV) ?? appliedNudgeEV
    }
}

/// The closed-loop ramp: estimates the scene's EV from each frame (settings + measured
/// brightness) and follows its trend, leaving brief changes alone. The trend is a robust
/// line through the last `windowSeconds` of measures: its slope the repeated median of the
/// pairwise slopes (Siegel), its level the median of the measures with that slope taken out, so
/// a cloud, headlights or a noisy frame that fill less than half the window move neither.
/// The settings follow the trend's slope frame by frame; what is left over is corrected
/// (a third a frame) once it is 0.1 EV, until it is under 0.02 EV (hysteresis: no hunting
/// on noise); the runner limits each step.
public struct AutoRampController: Sendable {
    public var targetEV: Double
    public var loop: ExposureRamp.Loop
    public static let startBandEV = 0.1
    public static let stopBandEV = 0.02
    /// The share of the leftover error corrected each frame.
    public static let correctionGain = 1.0 / 3
    /// A trend slower than this (EV an hour) is not followed (it may be noise).
    public static let minTrendEVPerHour = 1.0
    /// The highlight protection's window, and its rates (EV a minute) down and back.
    public static let clippedWindowSeconds = 30.0
    public static let protectEVPerMinute = 0.5
    public static let releaseEVPerMinute = 0.25
    private var samples: [(seconds: Double, ev: Double, clipped: Double)] = []
    private var line: (seconds: Double, ev: Double, slope: Double)?
    private var moving = false
    private var lastSeconds: Double?
    /// The highlight protection so far (≤ 0 EV).
    public private(set) var highlightEV = 0.0

    public init(targetEV: Double, loop: ExposureRamp.Loop = ExposureRamp.Loop()) {
        self.targetEV = targetEV
        self.loop = loop
    }

    /// How much of the night offset applies to a scene of `sceneEV`: 0 at EV 4 and
    /// brighter, 1 at EV −2 and darker, a smoothstep between.
    public static func nightWeight(sceneEV: Double) -> Double {
        let u = min(1, max(0, (4 - sceneEV) / 6))
        return u * u * (3 - 2 * u)
    }

    /// The brightness aimed at for a scene of `sceneEV`.
    public func targetBrightness(sceneEV: Double, nudgeEV: Double = 0) -> Double {
        targetEV + loop.nightOffsetEV * Self.nightWeight(sceneEV: sceneEV) + highlightEV + nudgeEV
    }

    /// A frame's measure: the scene's EV100 (settings + brightness), the fraction clipped
    /// white, and when it was shot.
    public mutating func observe(sceneEV: Double, clippedHigh: Double = 0, seconds: Double) {
        guard sceneEV.isFinite, seconds.isFinite else { return }
        let previous = samples.last?.seconds
        samples.append((seconds, sceneEV, clippedHigh.isFinite ? clippedHigh : 0))
        samples.removeAll { $0.seconds < seconds - loop.windowSeconds }
        // Siegel's repeated median: for each measure the median slope to the others, then
        // the median of those (it holds with up to half the window odd).
        var perSample: [Double] = []
        for a in samples {
            let slopes = samples.compactMap { b in abs(b.seconds - a.seconds) > 1e-6 ? (b.ev - a.ev) / (b.seconds - a.seconds) : nil }
            if !slopes.isEmpty { perSample.append(Self.median(slopes)) }
        }
        let slope = Self.median(perSample)
        let level = Self.median(samples.map { $0.ev - slope * ($0.seconds - seconds) })
        line = (seconds, level, slope)
        if let maxClipped = loop.maxClipped, let previous {
            let clipped = Self.median(samples.filter { $0.seconds >= seconds - Self.clippedWindowSeconds }.map(\.clipped))
            let minutes = max(0, seconds - previous) / 60
            if clipped > maxClipped {
                highlightEV -= Self.protectEVPerMinute * minutes * min(1, clipped / maxClipped - 1)
            } else if clipped < maxClipped / 2 {
                highlightEV += Self.releaseEVPerMinute * minutes
            }
            highlightEV = min(0, max(-loop.highlightMaxEV, highlightEV))
        }
    }

    /// The scene's EV at `seconds` as the loop reads it (its trend); nil before a measure.
    public func estimate(at seconds: Double) -> Double? {
        guard let line else { return nil }
        // Extrapolated at most a window ahead (a measure that stopped coming).
        return line.ev + line.slope * min(max(seconds - line.seconds, 0), loop.windowSeconds)
    }

    /// The settings EV for a frame at `seconds`, from `current`; `nudgeEV` brighter. The
    /// settings follow the trend's slope from frame to frame; what is left over is
    /// corrected only past the deadband, a third of it a frame.
    public mutating func nextEV(current: Double, seconds: Double, nudgeEV: Double = 0) -> Double {
        defer { lastSeconds = seconds }
        guard let scene = estimate(at: seconds), let line else { return current }
        let wanted = scene - targetBrightness(sceneEV: scene, nudgeEV: nudgeEV)
        // The trend, unless it is too slow to tell from noise.
        let dt = lastSeconds.map { max(0, seconds - $0) } ?? 0
        let followed = current + (abs(line.slope) * 3600 >= Self.minTrendEVPerHour ? line.slope * dt : 0)
        let error = wanted - followed
        if moving ? abs(error) < Self.stopBandEV : abs(error) < Self.startBandEV {
            moving = false
            return followed
        }
        moving = true
        return followed + error * Self.correctionGain
    }

    public static func median(_ values: [Double]) -> Double {
        guard !values.isEmpty else { return 0 }
        let sorted = values.sorted()
        let n = sorted.count
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2
    }
}

/// A ramp played against a simulated scene without the rig: what each frame would measure.
public enum RampSimulation {
    public struct Frame: Sendable {
        public var seconds: Double
        public var settings: ExposureSettings
        /// What the camera measured (brief changes, an odd frame's extra light and noise included).
        public var measured: Double
        /// The frame's brightness in the scene's lasting light (`SimScene.trendEV`): what
        /// the ramp is judged on (a cloud or headlights are the scene's, not the ramp's).
        public var brightness: Double
        /// The brightness the ramp aims at in that light (night offset and nudge included).
        public var target: Double

        public var errorEV: Double { brightness - target }
    }

    public struct Figures: Sendable {
        /// Of the ramp's own steps (|change of the settings' EV| from frame to frame): the
        /// 99th percentile, the largest, and the fraction ≤ 0.1 EV.
        public var p99StepEV: Double
        public var maxStepEV: Double
        public var fractionSmooth: Double
        /// |brightness − target| over all frames: the median; and the largest once settled
        /// (after the first `settleSeconds` and except `settleSeconds` after each lasting
        /// change's end).
        public var medianErrorEV: Double
        public var maxErrorEV: Double
        /// For each lasting change (street light, moonrise): seconds from its end until the
        /// brightness is back within 0.5 EV of the target for good (0: it never left).
        public var responseSeconds: [Double]
    }

    /// Plays `frames` frames `interval` seconds apart. `nudges`: (from this frame on, set
    /// the nudge to EV).
    public static func run(_ ramp: ExposureRamp, scene: SimScene, frames: Int, interval: Double, nudges: [Int: Double] = [:]) -> [Frame] {
        var runner = ExposureRampRunner(ramp)
        var out: [Frame] = []
        for i in 0..<frames {
            let t = Double(i) * interval
            if let nudge = nudges[i] { runner.nudge.set(nudge) }
            let settings = runner.settings(frame: i, seconds: t)
            let measured = scene.brightness(frame: i + 1, at: t, settings: settings)
            let trend = scene.trendEV(at: t)
            let target = runner.targetBrightness(sceneEV: trend)
            runner.measured(measured, settingsEV: settings.ev100, clippedHigh: scene.clippedHigh(brightness: measured, at: t), seconds: t)
            out.append(Frame(seconds: t, settings: settings, measured: measured, brightness: settings.brightness(sceneEV: trend), target: target))
        }
        return out
    }

    /// The naive ramp: each frame's settings made to put the last frame's measure on the
    /// target (following every measure, headlights and clouds included).
    public static func runNaive(scene: SimScene, frames: Int, interval: Double, limits: ExposureLimits, startEV: Double, targetEV: Double = 0)
        -> [Frame]
    {
        var ev = startEV
        var out: [Frame] = []
        for i in 0..<frames {
            let t = Double(i) * interval
            let settings = limits.settings(forEV: ev)
            let measured = scene.brightness(frame: i + 1, at: t, settings: settings)
            out.append(
                Frame(seconds: t, settings: settings, measured: measured, brightness: settings.brightness(sceneEV: scene.trendEV(at: t)), target: targetEV))
            ev = min(max(settings.ev100 + measured - targetEV, limits.evRange.lowerBound), limits.evRange.upperBound)
        }
        return out
    }

    /// The figures of a run through `scene` (whose lasting changes the response times are of).
    public static func figures(_ frames: [Frame], scene: SimScene = SimScene(), settleSeconds: Double = 300) -> Figures {
        let steps = zip(frames.dropFirst(), frames).map { abs($0.settings.ev100 - $1.settings.ev100) }.sorted()
        let p99 = steps.isEmpty ? 0 : steps[min(steps.count - 1, Int((Double(steps.count) * 0.99).rounded(.up)) - 1)]
        let changes = scene.events.compactMap(\.lastingChange)
        let errors = frames.map { abs($0.errorEV) }
        let settled = frames.filter { frame in
            frame.seconds >= (frames.first?.seconds ?? 0) + settleSeconds
                && !changes.contains { frame.seconds >= $0.lowerBound && frame.seconds < $0.upperBound + settleSeconds }
        }
        let end = frames.last?.seconds ?? 0
        let interval = frames.count > 1 ? frames[1].seconds - frames[0].seconds : 0
        let responses = changes.filter { $0.upperBound < end }.map { change -> Double in
            let off = frames.last { $0.seconds >= change.lowerBound && $0.seconds <= change.upperBound + 900 && abs($0.errorEV) > 0.5 }
            return off.map { max(0, $0.seconds + interval - change.upperBound) } ?? 0
        }
        return Figures(
            p99StepEV: p99, maxStepEV: steps.last ?? 0,
            fractionSmooth: steps.isEmpty ? 1 : Double(steps.filter { $0 <= 0.1 + 1e-9 }.count) / Double(steps.count),
            medianErrorEV: AutoRampController.median(errors), maxErrorEV: settled.map { abs($0.errorEV) }.max() ?? 0, responseSeconds: responses)
    }
}

extension ExposureRamp {
    /// `"ramp"` in `shoot`. `site` is the program's (for `"mode": "sun"`).
    public static func parse(_ value: ValueReader, site: Site?) throws(FileError) -> ExposureRamp {
        let object = try value.object()
        let modeValue = try object.required("mode", "\"keys\", \"sun\" or \"auto\"")
        let mode = try modeValue.oneOf(["keys", "sun", "auto"])
        let modeKeys = [
            "keys": ["keys"], "sun": ["day", "night", "start"],
            "auto": ["startEV", "targetEV", "windowSeconds", "nightOffsetEV", "maxClipped", "highlightMaxEV"],
        ]
        for (other, keys) in modeKeys where other != mode {
            if let key = keys.first(where: object.has), let value = object.optional(key) {
                throw value.error("\"\(key)\" is for \"mode\": \"\(other)\"; this ramp's mode is \"\(mode)\"")
            }
        }
        object.allow(modeKeys.values.flatMap { $0 })
        var limits = ExposureLimits()
        if let a = object.optional("aperture") { limits.aperture = try a.number(in: 0.5...128) }
        if let isos = object.optional("isos") {
            var list: [Double] = []
            for iso in try isos.nonEmptyArray() { list.append(try iso.number(in: 25...409_600)) }
            limits.isos = list.sorted()
        }
        if let m = object.optional("maxShutterSeconds") { limits.maxShutterSeconds = try m.number(in: 0.001...3600, unit: "s") }
        if let m = object.optional("minShutterSeconds") { limits.minShutterSeconds = try m.number(in: 0.00001...limits.maxShutterSeconds, unit: "s") }
        if let t = object.optional("thirdStops") { limits.bulb = !(try t.bool()) }
        if let p = object.optional("priority") {
            var order: [ExposureLimits.Setting] = []
            for item in try p.nonEmptyArray() {
                guard let setting = ExposureLimits.Setting(rawValue: try item.oneOf(ExposureLimits.Setting.allCases.map(\.rawValue))) else { continue }
                if order.contains(setting) { throw item.error("\"\(setting.rawValue)\" is listed twice; list each setting once") }
                order.append(setting)
            }
            limits.priority = order + ExposureLimits.Setting.allCases.filter { !order.contains($0) }
        }
        if let n = object.optional("narrowestAperture") {
            if mode == "sun" {
                throw n.error("a sun ramp shoots at one aperture (its day and night exposures name it); \"narrowestAperture\" is for \"keys\" and \"auto\"")
            }
            let f = try n.number(in: 0.5...128)
            guard f >= limits.aperture else {
                throw n.error(
                    "f/\(format(f)) is wider than the ramp's aperture f/\(format(limits.aperture)); give the f-number the aperture may close down to (≥ \(format(limits.aperture)))"
                )
            }
            limits.narrowestAperture = f
        }
        // A sun ramp's day and night exposures name the aperture and the ISO range it
        // shoots with (when the ramp does not set them itself).
        var namedApertures: [(Double, ValueReader)] = []
        var namedISOs: [Double] = []
        func settingsEV(_ key: String) throws(FileError) -> Double {
            let v = try object.required(key, "{\"shutter\", \"iso\", \"aperture\"}: the exposure then")
            let e = try Exposure.parse(v)
            guard let shutter = e.shutter.flatMap(ShutterSpeed.seconds) else { throw v.error("give \"shutter\": the \(key) exposure's shutter time") }
            var iso = 100.0
            if let text = e.iso {
                // The EV arithmetic needs a real ISO: "nan", "0", "1e400" or "Auto" would
                // make every frame's exposure NaN or infinite.
                guard let n = Double(text), n.isFinite, (25...409_600).contains(n) else {
                    throw (v.member("iso") ?? v).error("\"\(elided(text))\" is not an ISO this ramp can use; valid: a number 25…409600")
                }
                iso = n
                namedISOs.append(n)
            }
            let aperture = e.aperture.flatMap(Aperture.number) ?? limits.aperture
            return ExposureSettings(shutterSeconds: shutter, iso: iso, aperture: aperture).ev100 - (e.ev ?? 0)
        }
        let source: Source
        switch mode {
        case "keys":
            let keysValue = try object.required("keys", "[{\"frame\": N, \"ev\": EV100}, …] in increasing frames")
            var frames: [Double] = []
            var evs: [Double] = []
            for key in try keysValue.nonEmptyArray() {
                let k = try key.object()
                let frameValue = try k.required("frame")
                let frame = Double(try frameValue.integer(in: 0...Bounds.maxSteps))
                if let last = frames.last, frame <= last {
                    throw frameValue.error("frame \(Int(frame)) is not after frame \(Int(last)); keys go in increasing frames")
                }
                frames.append(frame)
                if let ev = k.optional("ev") {
                    if let both = ["shutter", "iso", "aperture"].lazy.compactMap({ k.optional($0) }).first {
                        throw both.error("give \"ev\" or the settings (\"shutter\", \"iso\", \"aperture\"), not both")
                    }
                    evs.append(try ev.number(in: -20...25, unit: "EV"))
                } else {
                    // The settings themselves: their EV100 (ISO 100 and the ramp's aperture unless given).
                    guard let shutterValue = k.optional("shutter") else {
                        throw key.error("give \"ev\" (the settings' EV100) or \"shutter\" (with \"iso\", \"aperture\" if not 100 and the ramp's)")
                    }
                    let shutter: Double
                    if case .number = shutterValue.node.value {
                        shutter = try shutterValue.number(in: 1e-5...3600, unit: "s")
                    } else {
                        let text = try shutterValue.nonEmptyString()
                        guard let seconds = ShutterSpeed.seconds(text) else {
                            throw shutterValue.error("\"\(elided(text))\" is not a shutter speed; valid: seconds such as \"1/250\", \"0.5\" or 30")
                        }
                        shutter = seconds
                    }
                    let iso = try k.optional("iso")?.number(in: 25...409_600) ?? 100
                    var aperture = limits.aperture
                    if let a = k.optional("aperture") {
                        if case .number = a.node.value {
                            aperture = try a.number(in: 0.5...128)
                        } else {
                            let text = try a.nonEmptyString()
                            guard let n = Aperture.number(text) else { throw a.error("\"\(elided(text))\" is not an aperture; valid: \"f/8\" or 8") }
                            aperture = n
                        }
                    }
                    evs.append(ExposureSettings(shutterSeconds: shutter, iso: iso, aperture: aperture).ev100)
                }
                try k.finish()
            }
            source = .keys(frames: frames, evs: evs)
        case "sun":
            guard let site else { throw modeValue.error("a sun ramp needs the site: give \"site\": {\"latitude\", \"longitude\"} in the program or its rig") }
            let startValue = try object.required("start", "the UTC time of the first frame, such as \"2026-06-21T19:00:00Z\"")
            let text = try startValue.nonEmptyString()
            guard let start = UTCTime.parse(text) else {
                throw startValue.error("\"\(elided(text))\" is not a UTC time; valid: ISO 8601 such as \"2026-06-21T19:00:00Z\"")
            }
            // One aperture all evening (changing it mid-shoot flickers): the one the day
            // and night exposures name, which every frame is shot at (and both EVs are
            // reckoned with).
            for key in ["day", "night"] {
                if let v = object.optional(key), let a = (try? Exposure.parse(v))?.aperture.flatMap(Aperture.number) {
                    namedApertures.append((a, v.member("aperture") ?? v))
                }
            }
            if let (aperture, _) = namedApertures.first {
                if let other = namedApertures.dropFirst().first(where: { abs($0.0 - aperture) > 1e-9 }) {
                    throw other.1.error(
                        "a sun ramp shoots at one aperture: the day's is f/\(format(aperture)), the night's f/\(format(other.0)); give both the same (the ramp follows the light with shutter and ISO)"
                    )
                }
                if let given = object.optional("aperture"), abs(limits.aperture - aperture) > 1e-9 {
                    throw given.error("the ramp's aperture f/\(format(limits.aperture)) is not the f/\(format(aperture)) its exposures name; give one")
                }
                limits.aperture = aperture
            }
            source = .sun(dayEV: try settingsEV("day"), nightEV: try settingsEV("night"), startUnix: start, site: site)
            // The ISOs the exposures name bound the ones the ramp may use, unless it lists its own.
            if object.optional("isos") == nil, let low = namedISOs.min(), let high = namedISOs.max() {
                let within = limits.isos.filter { $0 >= low - 1e-9 && $0 <= high + 1e-9 }
                limits.isos = Array(Set(within + [low, high])).sorted()
            }
        default:
            let target = try object.optional("targetEV")?.number(in: -5...5, unit: "EV") ?? 0
            let start = try object.required("startEV", "the first frame's EV100 (14 for daylight, −4 for a moonless night)").number(in: -20...25, unit: "EV")
            source = .auto(targetEV: target, startEV: start)
        }
        var ramp = ExposureRamp(source: source, limits: limits)
        if let w = object.optional("windowSeconds") { ramp.loop.windowSeconds = try w.number(in: 20...1800, unit: "s") }
        if let o = object.optional("nightOffsetEV") { ramp.loop.nightOffsetEV = try o.number(in: -3...1, unit: "EV") }
        if let c = object.optional("maxClipped") { ramp.loop.maxClipped = try c.number(in: 0.0001...0.5) }
        if let h = object.optional("highlightMaxEV") {
            guard object.has("maxClipped") else {
                throw h.error("\"highlightMaxEV\" bounds the highlight protection; give \"maxClipped\" (the fraction allowed to clip) to turn it on")
            }
            ramp.loop.highlightMaxEV = try h.number(in: 0.1...3, unit: "EV")
        }
        if let r = object.optional("maxEVPerHour") { ramp.maxEVPerHour = try r.number(in: 1...3600, unit: "EV/h") }
        if let s = object.optional("maxStepEV") { ramp.maxStepEV = try s.number(in: 0.05...3, unit: "EV") }
        if let n = object.optional("minFramesBetweenChanges") { ramp.minFramesBetweenChanges = try n.integer(in: 1...1000) }
        try object.finish()
        return ramp
    }

    /// The longest exposure the ramp may make: the hold a step must allow for (and what
    /// `check` holds an interval to). A plan's darkest EV; the limit for `auto`.
    public var longestShutterSeconds: Double {
        switch source {
        case .keys(_, let evs): limits.settings(forEV: evs.min() ?? 0).shutterSeconds
        case .sun(let day, let night, _, _): limits.settings(forEV: min(day, night)).shutterSeconds
        case .auto: limits.maxShutterSeconds
        }
    }
}
