import Foundation

/// How a timelapse's exposure follows the light (`"ramp"` in `shoot`): keyed by frame,
/// planned from the sun's altitude, or held to a target brightness from each frame's
/// measure; within the camera's limits, changing the total exposure by at most `maxStepEV`
/// a frame and (in 1/3-stop mode) at most once every `minFramesBetweenChanges` frames.
public struct ExposureRamp: Sendable, Equatable {
    public enum Source: Sendable, Equatable {
        /// EV100 of the settings by frame (0-based), interpolated in EV.
        case keys(frames: [Double], evs: [Double])
        /// The day settings' EV100 with the sun at or above `dayAltitude`, the night's at or
        /// below `nightAltitude`, in between linear in the sun's altitude. Frame 0 at `startUnix`.
        case sun(dayEV: Double, nightEV: Double, startUnix: Double, site: Site)
        /// Hold the measured brightness (EV from mid-grey) at `targetEV`, starting from `startEV`.
        case auto(targetEV: Double, startEV: Double)
    }

    public var source: Source
    public var limits: ExposureLimits
    /// The largest change of total exposure from one frame to the next.
    public var maxStepEV: Double
    /// In 1/3-stop mode: frames to wait after a change before the next.
    public var minFramesBetweenChanges: Int

    public static let dayAltitude = 6.0
    public static let nightAltitude = -14.0

    public init(source: Source, limits: ExposureLimits = ExposureLimits(), maxStepEV: Double = 1.0 / 3, minFramesBetweenChanges: Int = 1) {
        self.source = source
        self.limits = limits
        self.maxStepEV = maxStepEV
        self.minFramesBetweenChanges = minFramesBetweenChanges
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
            let u = min(1, max(0, (Self.dayAltitude - altitude) / (Self.dayAltitude - Self.nightAltitude)))
            return day + (night - day) * u
        case .auto:
            return nil
        }
    }
}

/// Turns a ramp into each frame's settings as the frames come: the plan (or, for `auto`,
/// the controller) gives the wanted EV; the rate limit, the 1/3-stop schedule and the
/// camera's limits give what is shot.
public struct ExposureRampRunner: Sendable {
    public let ramp: ExposureRamp
    private var controller: AutoRampController?
    /// The EV100 of the settings last shot.
    public private(set) var currentEV: Double?
    private var framesSinceChange = Int.max / 2

    public init(_ ramp: ExposureRamp) {
        self.ramp = ramp
        if case .auto(let target, _) = ramp.source { controller = AutoRampController(targetEV: target, maxStepEV: ramp.maxStepEV) }
    }

    /// The settings of frame `frame` (0-based), taken `seconds` into the run.
    public mutating func settings(frame: Int, seconds: Double) -> ExposureSettings {
        var wanted: Double
        if case .auto(_, let start) = ramp.source {
            wanted = controller?.nextEV(current: currentEV ?? start) ?? start
        } else {
            wanted = ramp.plannedEV(frame: frame, seconds: seconds) ?? 0
        }
        wanted = min(max(wanted, ramp.limits.evRange.lowerBound), ramp.limits.evRange.upperBound)
        var ev = wanted
        if let current = currentEV {
            if ramp.limits.bulb {
                ev = current + min(max(wanted - current, -ramp.maxStepEV), ramp.maxStepEV)
            } else {
                // 1/3 stops: change only by whole thirds, and not too often.
                let thirds = ((wanted - current) * 3).rounded()
                if thirds == 0 || framesSinceChange < ramp.minFramesBetweenChanges {
                    ev = current
                } else {
                    let step = min(abs(thirds) / 3, max(1.0 / 3, (ramp.maxStepEV * 3).rounded(.down) / 3))
                    ev = current + (thirds > 0 ? step : -step)
                }
            }
        } else if !ramp.limits.bulb {
            ev = (wanted * 3).rounded() / 3
        }
        framesSinceChange = (currentEV.map { abs($0 - ev) > 1e-9 } ?? true) ? 0 : framesSinceChange + 1
        currentEV = ev
        return ramp.limits.settings(forEV: ev)
    }

    /// A frame's measured brightness (EV from mid-grey), for `auto`.
    public mutating func measured(_ brightness: Double, settingsEV: Double) {
        controller?.observe(sceneEV: settingsEV + brightness)
    }
}

/// The closed-loop ramp: estimates the scene's EV from each frame (settings + measured
/// brightness), ignores a single odd frame (the median of the last five), smooths what is
/// left and follows its trend, and moves the settings toward target with a deadband and a
/// per-frame limit.
public struct AutoRampController: Sendable {
    public var targetEV: Double
    public var maxStepEV: Double
    public var deadbandEV = 0.03
    private var recent: [Double] = []
    private var smoothed: Double?
    private var slope = 0.0
    private var lastMedian: Double?

    public init(targetEV: Double, maxStepEV: Double) {
        self.targetEV = targetEV
        self.maxStepEV = maxStepEV
    }

    public mutating func observe(sceneEV: Double) {
        recent.append(sceneEV)
        if recent.count > 5 { recent.removeFirst() }
        let sorted = recent.sorted()
        let median = sorted[sorted.count / 2]
        if let last = lastMedian { slope += 0.2 * ((median - last) - slope) }
        lastMedian = median
        smoothed = smoothed.map { $0 + 0.35 * (median - $0) + slope } ?? median
    }

    /// The settings EV for the next frame, from `current`.
    public mutating func nextEV(current: Double) -> Double {
        guard let smoothed else { return current }
        // The median lags the scene by about two frames and the next frame is one ahead.
        let wanted = smoothed + 3 * slope - targetEV
        let change = wanted - current
        if abs(change) < deadbandEV { return current }
        return current + min(max(change, -maxStepEV), maxStepEV)
    }
}

/// A ramp played against a simulated scene without the rig: what each frame would measure.
public enum RampSimulation {
    public struct Frame: Sendable {
        public var seconds: Double
        public var settings: ExposureSettings
        /// What the camera measured (an odd frame's extra light included).
        public var measured: Double
        /// The ramp's own result: the brightness without an odd frame's extra light.
        public var brightness: Double
    }

    public struct Figures: Sendable {
        /// Of |brightness change| from frame to frame: the 99th percentile and the largest.
        public var p99StepEV: Double
        public var maxStepEV: Double
        /// Fraction of frame-to-frame changes ≤ 0.1 EV.
        public var fractionSmooth: Double
        /// The largest distance from the target brightness.
        public var maxErrorEV: Double
    }

    /// Plays `frames` frames `interval` seconds apart.
    public static func run(_ ramp: ExposureRamp, scene: SimScene, frames: Int, interval: Double) -> [Frame] {
        var runner = ExposureRampRunner(ramp)
        var out: [Frame] = []
        for i in 0..<frames {
            let t = Double(i) * interval
            let settings = runner.settings(frame: i, seconds: t)
            let measured = scene.brightness(frame: i + 1, at: t, settings: settings)
            runner.measured(measured, settingsEV: settings.ev100)
            out.append(Frame(seconds: t, settings: settings, measured: measured, brightness: settings.brightness(sceneEV: scene.ev(at: t))))
        }
        return out
    }

    /// The naive ramp many start with: change the exposure by a whole stop whenever a frame
    /// measures a stop or more off target.
    public static func runNaive(scene: SimScene, frames: Int, interval: Double, limits: ExposureLimits, startEV: Double, targetEV: Double = 0)
        -> [Frame]
    {
        var ev = startEV
        var out: [Frame] = []
        for i in 0..<frames {
            let t = Double(i) * interval
            let settings = limits.settings(forEV: ev)
            let measured = scene.brightness(frame: i + 1, at: t, settings: settings)
            out.append(Frame(seconds: t, settings: settings, measured: measured, brightness: settings.brightness(sceneEV: scene.ev(at: t))))
            if abs(measured - targetEV) >= 1 { ev += (measured - targetEV).rounded(.towardZero) }
        }
        return out
    }

    public static func figures(_ frames: [Frame], targetEV: Double = 0) -> Figures {
        let steps = zip(frames.dropFirst(), frames).map { abs($0.brightness - $1.brightness) }.sorted()
        let p99 = steps.isEmpty ? 0 : steps[min(steps.count - 1, Int((Double(steps.count) * 0.99).rounded(.up)) - 1)]
        return Figures(
            p99StepEV: p99, maxStepEV: steps.last ?? 0,
            fractionSmooth: steps.isEmpty ? 1 : Double(steps.filter { $0 <= 0.1 }.count) / Double(steps.count),
            maxErrorEV: frames.map { abs($0.brightness - targetEV) }.max() ?? 0)
    }
}

extension ExposureRamp {
    /// `"ramp"` in `shoot`. `site` is the program's (for `"mode": "sun"`).
    static func parse(_ value: ValueReader, site: Site?) throws(FileError) -> ExposureRamp {
        let object = try value.object()
        let modeValue = try object.required("mode", "\"keys\", \"sun\" or \"auto\"")
        let mode = try modeValue.oneOf(["keys", "sun", "auto"])
        let modeKeys = ["keys": ["keys"], "sun": ["day", "night", "start"], "auto": ["startEV", "targetEV"]]
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
