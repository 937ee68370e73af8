import FoundationEssentials
import Glibc
import RigSky

/// One frame of a paced stepped program on the clock, for `rig plan` and `rig plot`: when
/// it is shot, the interval after it, the sun's altitude then and its planned exposure.
public struct FrameClock: Sendable, Equatable {
    /// 0-based.
    public var frame: Int
    /// The shot's planned start, UTC Unix seconds.
    public var unix: Double
    /// Seconds from the program's start.
    public var seconds: Double
    /// The interval from this frame's shot to the next's.
    public var intervalSeconds: Double
    /// The sun's apparent altitude (with refraction) at the site; nil without a site.
    public var sunAltitude: Double?
    /// The ramp's planned settings for the frame; nil without a ramp (or `auto`: measured).
    public var exposure: ExposureSettings?
}

extension Program {
    /// Each frame of a program paced by `trigger` (`interval:S`, ramped by `intervalKeys`)
    /// on the clock from `startUnix` (the program's `start` when it has one); nil when the
    /// steps are not paced.
    public func frameClock(trigger: Trigger, startUnix: Double) -> [FrameClock]? {
        guard case .stepped(let steps) = motion else { return nil }
        var paced = ShootingPlan()
        paced.pace(by: trigger, stepIntervals: stepIntervals)
        guard paced.intervalSeconds != nil else { return nil }
        var seconds = 0.0
        var frames: [FrameClock] = []
        frames.reserveCapacity(steps.count)
        for index in steps.indices {
            let interval = paced.interval(after: index) ?? 0
            let unix = startUnix + seconds
            let altitude = site.map { Sky.position(of: .sun, at: unix, site: $0).altitude }
            let exposure = shoot.ramp.flatMap { ramp in ramp.plannedEV(frame: index, seconds: seconds).map { ramp.limits.settings(forEV: $0) } }
            frames.append(
                FrameClock(frame: index, unix: unix, seconds: seconds, intervalSeconds: interval, sunAltitude: altitude, exposure: exposure))
            seconds += interval
        }
        return frames
    }
}
