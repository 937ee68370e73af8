import FoundationEssentials
import Glibc

/// The light a simulated camera sees (`"scene"` of a `sim` camera, and the scenes the ramp
/// tests and `rig bench ramp` play): the scene's EV100 over the run's time, so a ramp can
/// be measured end to end without a camera. The base is keys or the clear-sky twilight at a
/// site; over it brief changes (clouds, headlights), lasting ones (a street light, the
/// moon rising) and seeded sensor noise.
public struct SimScene: Sendable, Equatable {
    /// (seconds, EV100) keys, interpolated in EV along a cosine ease between keys (when
    /// there is no `sky`).
    public var keys: [(seconds: Double, ev: Double)]
    /// Frames (1-based shot numbers) lit by something passing (a car's lights): that one frame
    /// measures `outlierEV` brighter than the scene.
    public var outliers: [Int: Double]
    /// The clear-sky twilight instead of keys.
    public var sky: SkyLight?
    public var events: [Event]
    /// Sensor noise: each frame's measure is off by a normal error of this σ (EV), drawn
    /// from `seed` and the frame number (the same frame measures the same).
    public var noiseEV: Double
    public var seed: UInt64

    /// The clear, moonless sky at `site` (`Sky.clearSkyEV` by the sun's geometric altitude),
    /// frame 0 at `startUnix`, lifted by a floor: a scene at `floorEV` lit by something else
    /// (sky glow, airglow, the town), so the night is no darker than that.
    public struct SkyLight: Sendable, Equatable {
        public var site: Site
        public var startUnix: Double
        public var floorEV: Double

        public init(site: Site, startUnix: Double, floorEV: Double = -5) {
            self.site = site
            self.startUnix = startUnix
            self.floorEV = floorEV
        }

        public func ev(at seconds: Double) -> Double {
            let altitude = Sky.position(of: .sun, at: startUnix + seconds, site: site, refraction: false).altitude
            return log2(exp2(Sky.clearSkyEV(sunAltitude: altitude)) + exp2(floorEV))
        }
    }

    /// A change of light over the base.
    public enum Event: Sendable, Equatable {
        /// A cloud passing: the light dips smoothly by up to `depthEV` over `seconds`. Brief.
        case cloud(start: Double, seconds: Double, depthEV: Double)
        /// Headlights sweeping the scene: `ev` brighter for `seconds`. Brief.
        case headlights(start: Double, seconds: Double, ev: Double)
        /// A street light turning on at `start` and staying on: adds the light of a scene at
        /// EV100 `ev`. With `lampInFrame` its lamp clips (see `clippedHigh`). Lasting.
        case streetLight(start: Double, ev: Double, lampInFrame: Bool)
        /// The moon rising: its light (a scene at EV100 `ev` once up) grows smoothly over
        /// `seconds`. Lasting.
        case moonrise(start: Double, seconds: Double, ev: Double)

        /// When a lasting change happens (its start to its end); nil for a brief one.
        public var lastingChange: ClosedRange<Double>? {
            switch self {
            case .cloud, .headlights: nil
            case .streetLight(let start, _, _): start...start
            case .moonrise(let start, let seconds, _): start...(start + seconds)
            }
        }
    }

    public init(
        keys: [(seconds: Double, ev: Double)] = [], outliers: [Int: Double] = [:], sky: SkyLight? = nil, events: [Event] = [], noiseEV: Double = 0,
        seed: UInt64 = 0
    ) {
        self.keys = keys.sorted { $0.seconds < $1.seconds }
        self.outliers = outliers
        self.sky = sky
        self.events = events
        self.noiseEV = noiseEV
        self.seed = seed
    }

    public static func == (a: SimScene, b: SimScene) -> Bool {
        a.keys.map(\.seconds) == b.keys.map(\.seconds) && a.keys.map(\.ev) == b.keys.map(\.ev) && a.outliers == b.outliers && a.sky == b.sky
            && a.events == b.events && a.noiseEV == b.noiseEV && a.seed == b.seed
    }

    /// A sunset: EV 14 (daylight) to EV −4 (night, moonless) over 90 minutes, the light
    /// falling fastest around the sun's setting (a cosine ease).
    public static let sunset = SimScene(keys: [(0, 14), (5400, -4)])
    public static let sunrise = SimScene(keys: [(0, -4), (5400, 14)])

    /// The base light: the keys', or the clear sky's over its floor.
    public func baseEV(at seconds: Double) -> Double {
        if let sky { return sky.ev(at: seconds) }
        guard let first = keys.first, let last = keys.last else { return 0 }
        if seconds <= first.seconds { return first.ev }
        if seconds >= last.seconds { return last.ev }
        let i = keys.lastIndex { $0.seconds <= seconds } ?? 0
        let (a, b) = (keys[i], keys[min(i + 1, keys.count - 1)])
        guard b.seconds > a.seconds else { return b.ev }
        let u = (seconds - a.seconds) / (b.seconds - a.seconds)
        return a.ev + (b.ev - a.ev) * (1 - cos(u * .pi)) / 2
    }

    /// The lasting light: the base with the lasting changes (street lights, the moon), without
    /// the brief ones. What a ramp should follow.
    public func trendEV(at seconds: Double) -> Double {
        var linear = exp2(baseEV(at: seconds))
        var added = false
        for event in events {
            switch event {
            case .streetLight(let start, let ev, _) where seconds >= start:
                linear += exp2(ev)
                added = true
            case .moonrise(let start, let length, let ev) where seconds > start:
                let u = min(1, (seconds - start) / max(length, 1e-9))
                linear += exp2(ev) * (1 - cos(u * .pi)) / 2
                added = true
            default: break
            }
        }
        return added ? log2(linear) : baseEV(at: seconds)
    }

    /// The light at `seconds`: the trend with the brief changes (clouds, headlights).
    public func ev(at seconds: Double) -> Double {
        var ev = trendEV(at: seconds)
        for event in events {
            switch event {
            case .cloud(let start, let length, let depth) where seconds > start && seconds < start + length:
                ev -= depth * pow(sin((seconds - start) / length * .pi), 2)
            case .headlights(let start, let length, let extra) where seconds >= start && seconds <= start + length:
                ev += extra
            default: break
            }
        }
        return ev
    }

    /// What a frame taken with `settings` at `seconds` measures (EV from mid-grey): the
    /// light, an odd frame's extra and the sensor's noise.
    public func brightness(frame: Int, at seconds: Double, settings: ExposureSettings) -> Double {
        var measured = settings.brightness(sceneEV: ev(at: seconds)) + (outliers[frame] ?? 0)
        if noiseEV > 0 {
            var generator = SplitMix64(seed: seed &* 0x9E37_79B9_7F4A_7C15 &+ UInt64(truncatingIfNeeded: frame))
            measured += noiseEV * generator.gaussian()
        }
        return measured
    }

    /// The fraction of the frame clipped white at `brightness` (EV from mid-grey) at
    /// `seconds`: 5 % once the frame is 2.5 EV over mid-grey; a street lamp in frame clips
    /// 1 % of the frame at 1 EV under mid-grey, twice that a stop brighter (at most 20 %).
    public func clippedHigh(brightness: Double, at seconds: Double) -> Double {
        var fraction = brightness > 2.5 ? 0.05 : 0
        for case .streetLight(let start, _, true) in events where seconds >= start {
            fraction += min(0.2, 0.01 * exp2(brightness + 1))
        }
        return min(1, fraction)
    }
}

extension SimScene {
    /// The brief and lasting changes a twilight scene may carry.
    public enum EventKind: String, Sendable, CaseIterable {
        case clouds, headlights, streetLight, moonrise
    }

    /// The time the sun sinks through `altitude` (geometric degrees) on the evening of the
    /// UTC day starting at `dayUnix` (searched minute by minute from local noon), or rises
    /// through it in the morning.
    public static func sunCrossing(site: Site, dayUnix: Double, altitude: Double, evening: Bool) -> Double {
        let localNoon = dayUnix + 43200 - site.longitude / 15 * 3600
        let from = evening ? localNoon : localNoon - 43200
        for minute in 0..<720 {
            let t = from + Double(minute) * 60
            let h = Sky.position(of: .sun, at: t, site: site, refraction: false).altitude
            if evening ? h < altitude : h > altitude { return t }
        }
        return from + 43200
    }

    /// A twilight at `site` on the UTC day `dayUnix`: the clear sky from the sun 8° up to
    /// 16° down and 45 minutes more (evening; the reverse in the morning), over a floor at
    /// EV −5, with the events of `kinds` drawn from `seed` (times, lengths, strengths) and
    /// 0.05 EV of sensor noise. The lasting changes come in the dark (the sky within 1.5 EV
    /// of the floor), the street light in its first half, the moon in its second.
    /// Deterministic: the same arguments make the same scene.
    public static func twilight(site: Site, dayUnix: Double, evening: Bool = true, kinds: Set<EventKind>, seed: UInt64, noiseEV: Double = 0.05)
        -> (scene: SimScene, seconds: Double)
    {
        let day = sunCrossing(site: site, dayUnix: dayUnix, altitude: 8, evening: evening)
        let night = sunCrossing(site: site, dayUnix: dayUnix, altitude: -16, evening: evening)
        let start = evening ? day : night - 2700
        let seconds = max(abs(night - day) + 2700, 1800)
        let sky = SkyLight(site: site, startUnix: start)
        var dark = 0.0...seconds
        let darkAt = stride(from: 0.0, through: seconds, by: 60).filter { sky.ev(at: $0) <= sky.floorEV + 1.5 }
        if let first = darkAt.first, let last = darkAt.last { dark = evening ? first...seconds : 0...last }
        var rng = SplitMix64(seed: seed)
        func uniform(_ range: ClosedRange<Double>) -> Double { Double.random(in: range, using: &rng) }
        var events: [Event] = []
        if kinds.contains(.clouds) {
            // Passing clouds, one in each eighth of the run (apart: two at once would be a
            // lasting change).
            let slot = seconds / 8
            for i in 0..<8 {
                events.append(.cloud(start: Double(i) * slot + uniform(0...(slot - 60)), seconds: uniform(20...60), depthEV: uniform(0.5...1.5)))
            }
        }
        if kinds.contains(.headlights) {
            for _ in 0..<10 { events.append(.headlights(start: uniform(0...(seconds - 20)), seconds: uniform(3...15), ev: uniform(1.5...3))) }
        }
        let middle = (dark.lowerBound + dark.upperBound) / 2
        if kinds.contains(.streetLight) {
            let latest = max(dark.lowerBound, middle - 600)
            events.append(.streetLight(start: uniform(dark.lowerBound...latest), ev: uniform(-2.5 ... -1.5), lampInFrame: false))
        }
        if kinds.contains(.moonrise) {
            let length = uniform(900...1800)
            let latest = max(middle, dark.upperBound - length - 600)
            events.append(.moonrise(start: uniform(middle...latest), seconds: length, ev: uniform(-4 ... -3)))
        }
        return (SimScene(sky: sky, events: events, noiseEV: noiseEV, seed: seed), seconds)
    }
}
