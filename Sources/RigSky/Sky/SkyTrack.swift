import FoundationEssentials
import Glibc
import RigFormat

/// How the head points at the sky: which axis turns in azimuth and which in altitude, where
/// north is on the azimuth axis, and the altitude axis's zero.
public struct SkyMount: Sendable, Equatable {
    public var azimuthAxis: Int
    public var altitudeAxis: Int
    /// The azimuth the pan axis points at when it is at 0°.
    public var northDeg: Double
    /// Added to the altitude (a tilt axis whose 0° is not level).
    public var tiltOffsetDeg: Double

    public init(azimuthAxis: Int, altitudeAxis: Int, northDeg: Double, tiltOffsetDeg: Double) {
        self.azimuthAxis = azimuthAxis
        self.altitudeAxis = altitudeAxis
        self.northDeg = northDeg
        self.tiltOffsetDeg = tiltOffsetDeg
    }

    /// The axis positions that point at `position`: pan continuous with `previousPan` (no
    /// jump at ±180°).
    public func pose(for position: HorizontalPosition, previousPan: Double?) -> (pan: Double, tilt: Double) {
        var pan = position.azimuth - northDeg
        pan = pan - 360 * (pan / 360).rounded()  // −180…180
        if let previousPan {
            pan += 360 * ((previousPan - pan) / 360).rounded()
        }
        return (pan, position.altitude + tiltOffsetDeg)
    }
}

/// A `"kind": "track"` program's section: follow a target across the sky from a start time.
public struct SkyTrack: Sendable, Equatable {
    public var target: SkyTarget
    public var site: Site
    /// UTC, Unix seconds.
    public var startUnix: Double
    public var mount: SkyMount
    /// Stepped (a frame every interval, the rig still for each shot) or continuous.
    public var frames: Int?
    /// Stepped: the time between frames (the program's `interval:S`).
    public var intervalSeconds: Double?
    public var durationSeconds: Double?
    /// Continuous: a keyframe every this many seconds.
    public var keySeconds: Double
    /// Where it stops following the target and what the head does then (`"until"`,
    /// `"then"`), and when and where that happens (`resolveChangeOver`).
    public var end: TrackEnd?
    public var changeOver: ChangeOver?

    public init(
        target: SkyTarget, site: Site, startUnix: Double, mount: SkyMount, frames: Int? = nil, intervalSeconds: Double? = nil,
        durationSeconds: Double? = nil, keySeconds: Double
    ) {
        self.target = target
        self.site = site
        self.startUnix = startUnix
        self.mount = mount
        self.frames = frames
        self.intervalSeconds = intervalSeconds
        self.durationSeconds = durationSeconds
        self.keySeconds = keySeconds
    }

    /// One sample of the track: when, where the target is, and the pose (the target's
    /// while `following`, else the change-over's hold or pan).
    public struct Sample: Sendable, Equatable {
        public var seconds: Double
        public var position: HorizontalPosition
        public var pan: Double
        public var tilt: Double
        public var following: Bool = true
    }

    /// The times of the frames (stepped) or keys (continuous), in seconds from the start; a
    /// continuous track has a key at its change-over too.
    public var times: [Double] {
        if let frames, let interval = intervalSeconds { return (0..<frames).map { Double($0) * interval } }
        let duration = durationSeconds ?? 0
        let count = Int((duration / keySeconds).rounded(.up))
        var keys = (0...count).map { min(Double($0) * keySeconds, duration) }
        if let at = changeOver?.seconds, at > 0, at < duration, !keys.contains(where: { abs($0 - at) < 0.5 }) {
            keys.insert(at, at: keys.firstIndex { $0 > at } ?? keys.count)
        }
        return keys
    }

    /// The target at each of `times` (seconds from the start), as poses.
    public func samples(at times: [Double]) -> [Sample] {
        var previous: Double?
        return times.map { t in
            let position = Sky.position(of: target, at: startUnix + t, site: site)
            if let held = changeOver?.pose(atSeconds: t) {
                previous = held.pan
                return Sample(seconds: t, position: position, pan: held.pan, tilt: held.tilt, following: false)
            }
            let pose = mount.pose(for: position, previousPan: previous)
            previous = pose.pan
            return Sample(seconds: t, position: position, pan: pose.pan, tilt: pose.tilt)
        }
    }

    /// The pose at `seconds` from the start: the target's (pan continuous with
    /// `previousPan`) until the change-over, then its hold or pan. Allocates nothing (the
    /// loop thread aims with it).
    public func aim(atSeconds seconds: Double, previousPan: Double?) -> (pan: Double, tilt: Double) {
        if let held = changeOver?.pose(atSeconds: seconds) { return held }
        return mount.pose(for: Sky.position(of: target, at: startUnix + seconds, site: site), previousPan: previousPan)
    }

    /// The target's altitude that `until` is measured on: the sun's geometric one for its
    /// set (the −0.833° that `SunTimes` and `rig plan` call sunset), else the refracted one
    /// the track points at.
    func altitude(for until: TrackEnd.Until, atSeconds seconds: Double) -> Double {
        let geometric = until == .set && target == .sun
        return Sky.position(of: target, at: startUnix + seconds, site: site, refraction: !geometric).altitude
    }

    /// What `until` falls to: −0.833° (geometric) for the sun's set, 0° for another
    /// target's, else the altitude given.
    func threshold(for until: TrackEnd.Until) -> Double {
        switch until {
        case .set: target == .sun ? SunTimes.thresholds[0].altitude : 0
        case .altitude(let a): a
        }
    }

    /// Why a track's `until` cannot be used.
    public enum ChangeOverProblem: Error, Equatable {
        /// The target is at or below the altitude at the start (its altitude then).
        case alreadyBelow(altitude: Double)
    }

    /// How far `resolveChangeOver` looks from the start: a day past the track's end (a track
    /// played late aims past its planned end), and no more than 8 days in all (anything that
    /// sets has done so; a parse stays quick).
    public static func changeOverSearchSeconds(lengthSeconds: Double) -> Double {
        min(lengthSeconds, 7 * 86_400) + 86_400
    }

    /// Finds when the target first falls to `end`'s altitude, from the start until
    /// `changeOverSearchSeconds` (a day after `lengthSeconds`), sampled every
    /// minute and refined by bisection to a hundredth of a second; the pose then (pan
    /// continuous with the track's own path from its start) and the pan's rate over its
    /// last 10 s; `panLimits` bound the pan that goes on. No crossing in that time: none.
    public mutating func resolveChangeOver(
        _ end: TrackEnd, lengthSeconds: Double, panLimits: ClosedRange<Double>
    ) -> Result<ChangeOver?, ChangeOverProblem> {
        self.end = end
        changeOver = nil
        let limit = threshold(for: end.until)
        let startAltitude = altitude(for: end.until, atSeconds: 0)
        guard startAltitude > limit else { return .failure(.alreadyBelow(altitude: startAltitude)) }
        var pan: Double?
        var t0 = 0.0
        var crossing: Double?
        let searched = Self.changeOverSearchSeconds(lengthSeconds: lengthSeconds)
        while t0 < searched {
            let t1 = t0 + 60
            // The pan along the track, so the change-over's is continuous with its frames.
            pan = mount.pose(for: Sky.position(of: target, at: startUnix + t0, site: site), previousPan: pan).pan
            if altitude(for: end.until, atSeconds: t1) <= limit {
                var (lo, hi) = (t0, t1)
                while hi - lo > 0.01 {
                    let mid = (lo + hi) / 2
                    if altitude(for: end.until, atSeconds: mid) <= limit { hi = mid } else { lo = mid }
                }
                crossing = hi
                break
            }
            t0 = t1
        }
        guard let at = crossing else { return .success(nil) }
        let before = mount.pose(for: Sky.position(of: target, at: startUnix + at - 10, site: site), previousPan: pan)
        let pose = mount.pose(for: Sky.position(of: target, at: startUnix + at, site: site), previousPan: before.pan)
        let found = ChangeOver(
            end: end, seconds: at, pan: pose.pan, tilt: pose.tilt, panRate: (pose.pan - before.pan) / 10, panLimits: panLimits)
        changeOver = found
        return .success(found)
    }

    /// "19:04:10 UTC" for a time on the track.
    public func clock(_ seconds: Double) -> String { UTCTime.text(startUnix + seconds, dateToo: false) }
}

/// Where a track stops following its target and what the head does then: `"until"`
/// (`"set"` or `{"altitude": DEG}`) and `"then"` (`"hold"` or `"pan"`).
public struct TrackEnd: Sendable, Equatable {
    public enum Until: Sendable, Equatable {
        /// The target sets: the sun at sunset (its upper limb on the refracted horizon,
        /// −0.833° geometric, as `rig plan` names it), another target at 0° (refracted).
        case set
        /// The target's altitude as the track points at it (refracted) falls to this.
        case altitude(Double)
    }

    public enum Then: String, Sendable, CaseIterable {
        /// The last pose, held.
        case hold
        /// Pan goes on at its last rate (tilt held) until a soft limit, then holds there.
        case pan
    }

    public var until: Until
    public var then: Then

    public init(until: Until, then: Then) {
        self.until = until
        self.then = then
    }

    /// "it sets", "its altitude falls to 5°".
    public var untilText: String {
        switch until {
        case .set: "it sets"
        case .altitude(let a): "its altitude falls to \(fixed(a, 2))°"
        }
    }
}

/// When a track stops following its target (seconds from its start), its pose then, and
/// what follows: that pose held, or the pan going on at `panRate` within `panLimits`.
public struct ChangeOver: Sendable, Equatable {
    public var end: TrackEnd
    public var seconds: Double
    public var pan: Double
    public var tilt: Double
    /// Degrees a second, the pan's over the last 10 s before the change-over.
    public var panRate: Double
    public var panLimits: ClosedRange<Double>

    public init(end: TrackEnd, seconds: Double, pan: Double, tilt: Double, panRate: Double, panLimits: ClosedRange<Double>) {
        self.end = end
        self.seconds = seconds
        self.pan = pan
        self.tilt = tilt
        self.panRate = panRate
        self.panLimits = panLimits
    }

    /// The pose at `seconds` from the track's start, or nil before the change-over.
    @inline(__always)
    public func pose(atSeconds t: Double) -> (pan: Double, tilt: Double)? {
        guard t >= seconds else { return nil }
        switch end.then {
        case .hold: return (pan, tilt)
        case .pan: return (min(max(pan + panRate * (t - seconds), panLimits.lowerBound), panLimits.upperBound), tilt)
        }
    }

    /// Panning on: when the pan reaches its soft limit (seconds from the track's start),
    /// or nil (holding, or a rate of nothing).
    public var limitSeconds: Double? {
        guard end.then == .pan, abs(panRate) > 1e-12 else { return nil }
        let bound = panRate > 0 ? panLimits.upperBound : panLimits.lowerBound
        return seconds + max((bound - pan) / panRate, 0)
    }
}

/// The sun's rise, set and twilights on a day, for `rig plan`.
public enum SunTimes {
    public struct Event: Sendable, Equatable {
        public var name: String
        public var unix: Double
    }

    /// The altitudes the events are defined by: the upper limb on a refracted horizon, and
    /// the civil, nautical and astronomical twilights.
    public static let thresholds: [(rising: String, setting: String, altitude: Double)] = [
        ("sunrise", "sunset", -0.833), ("civil dawn", "civil dusk", -6), ("nautical dawn", "nautical dusk", -12),
        ("astronomical dawn", "astronomical dusk", -18),
    ]

    /// Every crossing between `from` and `to` (Unix seconds), in time order; sampled every
    /// 10 minutes and refined by bisection to a second.
    public static func events(site: Site, from: Double, to: Double) -> [Event] {
        // The geometric altitude: the thresholds already include refraction.
        func altitude(_ t: Double) -> Double { Sky.position(of: .sun, at: t, site: site, refraction: false).altitude }
        var events: [Event] = []
        var t0 = from
        var a0 = altitude(t0)
        while t0 < to {
            let t1 = min(t0 + 600, to)
            let a1 = altitude(t1)
            for threshold in thresholds where (a0 - threshold.altitude) * (a1 - threshold.altitude) < 0 {
                var (lo, hi) = (t0, t1)
                while hi - lo > 1 {
                    let mid = (lo + hi) / 2
                    if (altitude(mid) - threshold.altitude) * (a0 - threshold.altitude) > 0 { lo = mid } else { hi = mid }
                }
                events.append(Event(name: a1 > a0 ? threshold.rising : threshold.setting, unix: (lo + hi) / 2))
            }
            (t0, a0) = (t1, a1)
        }
        return events.sorted { $0.unix < $1.unix }
    }
}
