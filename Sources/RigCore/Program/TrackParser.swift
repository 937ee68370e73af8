import FoundationEssentials
import Glibc
import RigFormat
import RigSky

extension ProgramParser {
    /// `"site": {"latitude", "longitude", "elevationM", "pressureHPa", "temperatureC"}` in a
    /// rig or a program (the air for refraction; the standard atmosphere at the elevation
    /// when not given).
    static func parseSite(_ value: ValueReader) throws(FileError) -> Site {
        let object = try value.object()
        let latitude = try object.required("latitude", "degrees, north positive").number(in: -90...90, unit: "°")
        let longitude = try object.required("longitude", "degrees, east positive").number(in: -180...180, unit: "°")
        let elevation = try object.optional("elevationM")?.number(in: -500...9000, unit: "m") ?? 0
        let pressure = try object.optional("pressureHPa")?.number(in: 300...1100, unit: "hPa")
        let temperature = try object.optional("temperatureC")?.number(in: -60...60, unit: "°C")
        try object.finish()
        return Site(latitude: latitude, longitude: longitude, elevationM: elevation, pressureHPa: pressure, temperatureC: temperature)
    }

    /// A `"kind": "track"` program's `"track"` section: the target, the start, the mount, and
    /// either `frames` (stepped, one per `interval:S`) or `durationSeconds` (continuous).
    static func parseTrack(
        _ section: ValueReader, rig: Rig, site: Site?, trigger: Trigger?, settle: Double, programStart: ProgramStart? = nil
    ) throws(FileError) -> (SkyTrack, Motion) {
        let object = try section.object()
        guard let site else {
            throw section.error("a track needs the site: give \"site\": {\"latitude\", \"longitude\"} in the program or its rig")
        }
        let targetValue = try object.required("target", "\"sun\", \"moon\", \"galacticCentre\" or {\"ra\": degrees, \"dec\": degrees} (J2000)")
        let target: SkyTarget
        if case .string = targetValue.node.value {
            switch try targetValue.oneOf(["sun", "moon", "galacticCentre"]) {
            case "sun": target = .sun
            case "moon": target = .moon
            default: target = .galacticCentre
            }
        } else {
            let fixed = try targetValue.object()
            let ra: Double
            if let hours = fixed.optional("raHours") {
                ra = try hours.number(in: 0...24, unit: "h") * 15
            } else {
                ra = try fixed.required("ra", "J2000 right ascension in degrees (or \"raHours\")").number(in: 0...360, unit: "°")
            }
            let dec = try fixed.required("dec", "J2000 declination in degrees").number(in: -90...90, unit: "°")
            try fixed.finish()
            target = .fixed(raDegrees: ra, decDegrees: dec)
        }
        // The program's "start" (which `rig play` waits for) starts the track too; without
        // one, the track's own.
        let start: Double
        if let programStart {
            if let own = object.optional("start") {
                throw own.error("the program's \"start\" starts the track; give the start once (the program's, which rig play waits for)")
            }
            start = programStart.unix
        } else {
            let startValue = try object.required(
                "start", "the UTC time to start, such as \"2026-06-21T19:00:00Z\" (or give the program a \"start\", which rig play waits for)")
            let startText = try startValue.nonEmptyString()
            guard let parsed = UTCTime.parse(startText), (946_684_800...4_102_444_800).contains(parsed) else {
                throw startValue.error("\"\(elided(startText))\" is not a UTC time in 2000–2099; valid: ISO 8601 such as \"2026-06-21T19:00:00Z\"")
            }
            start = parsed
        }
        let mountObject = try object.optional("mount")?.object()
        func axis(_ key: String, _ fallback: String) throws(FileError) -> Int {
            let value = mountObject?.optional(key)
            let name = try value?.string() ?? fallback
            guard let index = rig.axisIndex(named: name) else {
                let message = "the rig has no axis \"\(elided(name))\"; its axes: \(quotedList(rig.axes.map(\.name)))"
                throw value?.error(message) ?? section.error(message + " (set \"mount\": {\"\(key)\": …})")
            }
            return index
        }
        let mount = SkyMount(
            azimuthAxis: try axis("azimuthAxis", "pan"), altitudeAxis: try axis("altitudeAxis", "tilt"),
            northDeg: try mountObject?.optional("northDeg")?.number(in: -360...360, unit: "°") ?? 0,
            tiltOffsetDeg: try mountObject?.optional("tiltOffsetDeg")?.number(in: -90...90, unit: "°") ?? 0)
        try mountObject?.finish()
        if mount.azimuthAxis == mount.altitudeAxis { throw section.error("azimuthAxis and altitudeAxis must be different axes") }

        var track = SkyTrack(target: target, site: site, startUnix: start, mount: mount, keySeconds: 60)
        var times: [Double]
        let framesValue = object.optional("frames")
        let durationValue = object.optional("durationSeconds")
        if let framesValue {
            if durationValue != nil { throw framesValue.error("give \"frames\" (a stepped track) or \"durationSeconds\" (a continuous one), not both") }
            let frames = try framesValue.integer(in: 1...Bounds.maxSteps)
            guard case .interval(let interval)? = trigger else {
                throw framesValue.error("a stepped track takes a frame every interval: give \"trigger\": \"interval:SECONDS\"")
            }
            track.frames = frames
            track.intervalSeconds = interval
            times = track.times
        } else if let durationValue {
            if trigger != nil { throw section.error("a continuous track (durationSeconds) takes no trigger; give \"frames\" for a stepped one") }
            let duration = try durationValue.number(in: 1...172_800, unit: "s")
            if let k = object.optional("keySeconds") { track.keySeconds = try k.number(in: 1...3600, unit: "s") }
            track.durationSeconds = duration
            times = track.times
        } else {
            throw section.error("give \"frames\" (a stepped track, with \"trigger\": \"interval:SECONDS\") or \"durationSeconds\" (a continuous one)")
        }
        // "until": where it stops following the target; "then": hold or go on panning.
        let untilValue = object.optional("until")
        let thenValue = object.optional("then")
        if let untilValue {
            try parseTrackEnd(untilValue, then: thenValue, into: &track, length: times.last ?? 0, panAxis: rig.axes[mount.azimuthAxis])
        } else if let thenValue {
            throw thenValue.error("\"then\" says what follows the track's \"until\"; give \"until\": \"set\" or {\"altitude\": DEGREES}")
        }
        try object.finish()

        // A continuous track's keys with one at the change-over.
        times = track.times
        let samples = track.samples(at: times)
        var poses: [[Double]] = []
        for (i, sample) in samples.enumerated() {
            let when = "\(track.clock(sample.seconds))" + (track.frames != nil ? " (frame \(i + 1))" : " (t=\(format(sample.seconds)) s)")
            // With an "until" the target is followed only while above it (which may be under
            // the horizon: the sun's set, or an altitude below 0°).
            guard sample.position.altitude >= 0 || track.end != nil else {
                throw section.error(
                    "\(target.name) is below the horizon at \(when), altitude \(fixed(sample.position.altitude, 1))°; start later, end the track sooner, or give \"until\": \"set\" to hold once it sets"
                )
            }
            var pose = rig.homePose
            for (axisIndex, value) in [(mount.azimuthAxis, sample.pan), (mount.altitudeAxis, sample.tilt)] {
                let a = rig.axes[axisIndex]
                guard value >= a.softMin, value <= a.softMax else {
                    if !sample.following {
                        throw section.error(
                            "at \(when) the pose held from the change-over puts \(a.name) at \(fixed(value, 1))°, outside its soft limits \(format(a.softMin))…\(format(a.softMax))°; set \"northDeg\" so the path fits"
                        )
                    }
                    throw section.error(
                        "at \(when) \(target.name) is at azimuth \(fixed(sample.position.azimuth, 1))°, altitude \(fixed(sample.position.altitude, 1))°: \(a.name) would be \(fixed(value, 1))°, outside its soft limits \(format(a.softMin))…\(format(a.softMax))°; set \"northDeg\" so the path fits, or shorten the track"
                    )
                }
                pose[axisIndex] = value
            }
            poses.append(pose)
        }
        if track.frames != nil {
            let then = track.end?.then == .pan ? "panning" : "held"
            let steps = zip(samples, poses).enumerated().map { i, pair in
                Step(
                    pose: pair.1, settleSeconds: settle,
                    label: "\(track.clock(pair.0.seconds)), alt \(fixed(pair.0.position.altitude, 2))°" + (pair.0.following ? "" : " (\(then))"),
                    aim: track)
            }
            return (track, .stepped(steps))
        }
        var tracks: [AxisTrack?] = Array(repeating: nil, count: rig.axes.count)
        for axisIndex in [mount.azimuthAxis, mount.altitudeAxis] {
            tracks[axisIndex] = AxisTrack(keys: zip(times, poses).map { Keyframe(time: $0, value: $1[axisIndex], interpolation: .smooth) })
        }
        return (track, .continuous(tracks: tracks, durationSeconds: times.last ?? 0))
    }

    /// `"until": "set"` or `{"altitude": DEGREES}` and `"then": "hold"` (default) or
    /// `"pan"`: the change-over found on the sky, within a day of the track's end.
    static func parseTrackEnd(
        _ untilValue: ValueReader, then thenValue: ValueReader?, into track: inout SkyTrack, length: Double, panAxis: Axis
    ) throws(FileError) {
        let until: TrackEnd.Until
        if case .string = untilValue.node.value {
            _ = try untilValue.oneOf(["set"])
            until = .set
        } else {
            let object = try untilValue.object()
            let altitude = try object.required("altitude", "the target's altitude in degrees (refracted, as the track points at it)").number(
                in: -10...89, unit: "°")
            try object.finish()
            until = .altitude(altitude)
        }
        let then: TrackEnd.Then
        switch try thenValue?.oneOf(TrackEnd.Then.allCases.map(\.rawValue)) {
        case "pan"?: then = .pan
        default: then = .hold
        }
        let end = TrackEnd(until: until, then: then)
        switch track.resolveChangeOver(end, lengthSeconds: length, panLimits: panAxis.softMin...panAxis.softMax) {
        case .failure(.alreadyBelow(let altitude)):
            let name = track.target.name
            switch until {
            case .set:
                throw untilValue.error(
                    "\(name) has already set at the start (\(track.clock(0)): altitude \(fixed(altitude, 2))°); start earlier, or give no \"until\"")
            case .altitude(let limit):
                throw untilValue.error(
                    "\(name) is at \(fixed(altitude, 2))° at the start (\(track.clock(0))), already at or below \(format(limit))°; start earlier, or give a lower altitude"
                )
            }
        case .success:
            break
        }
    }
}
