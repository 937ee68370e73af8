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

    /// One sample of the track: when, where the target is, and the pose.
    public struct Sample: Sendable, Equatable {
        public var seconds: Double
        public var position: HorizontalPosition
        public var pan: Double
        public var tilt: Double
    }

    /// The times of the frames (stepped) or keys (continuous), in seconds from the start.
    public var times: [Double] {
        if let frames, let interval = intervalSeconds { return (0..<frames).map { Double($0) * interval } }
        let duration = durationSeconds ?? 0
        let count = Int((duration / keySeconds).rounded(.up))
        return (0...count).map { min(Double($0) * keySeconds, duration) }
    }

    /// The target at each of `times` (seconds from the start), as poses.
    public func samples(at times: [Double]) -> [Sample] {
        var previous: Double?
        return times.map { t in
            let position = Sky.position(of: target, at: startUnix + t, site: site)
            let pose = mount.pose(for: position, previousPan: previous)
            previous = pose.pan
            return Sample(seconds: t, position: position, pan: pose.pan, tilt: pose.tilt)
        }
    }

    /// "19:04:10 UTC" for a time on the track.
    public func clock(_ seconds: Double) -> String { UTCTime.text(startUnix + seconds, dateToo: false) }
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
