import RigCore
import RigFormat
import RigSky

/// `rig check`'s and `rig plan`'s line on a track's `"until"`: when it stops following its
/// target (in which frame), and what the head does then.
enum TrackReport {
    static func lines(_ program: Program) -> [String] {
        guard let track = program.track, let end = track.end else { return [] }
        let name = track.target.name
        let rig = program.rig
        let panAxis = rig.axes[track.mount.azimuthAxis]
        let tiltAxis = rig.axes[track.mount.altitudeAxis]
        let times = track.frames != nil ? track.times : []
        let last = track.times.last ?? 0
        guard let change = track.changeOver else {
            let never: String
            switch end.until {
            case .set: never = "it does not set"
            case .altitude(let a): never = "its altitude does not fall to \(format(a))°"
            }
            let searched = SkyTrack.changeOverSearchSeconds(lengthSeconds: last)
            return ["track: follows \(name) to its end: \(never) within \(ShootTime.duration(searched)) of its start"]
        }
        let at = UTCTime.text(track.startUnix + change.seconds, dateToo: true)
        guard change.seconds <= last else {
            return [
                "track: \(name) \(end.until == .set ? "sets" : "reaches the \"until\" altitude") at \(at), \(ShootTime.duration(change.seconds - last)) after the track's last \(track.frames != nil ? "frame" : "key"): it is followed throughout (played late, it \(end.then == .hold ? "holds" : "pans on") from then)"
            ]
        }
        // The frames shot after it (a stepped track), or the time from it (continuous).
        let where_: String
        if let first = times.firstIndex(where: { $0 >= change.seconds }) {
            where_ = first == times.count - 1 ? "frame \(first + 1) after it" : "frames \(first + 1)–\(times.count) after it"
        } else {
            where_ = "t=\(format(change.seconds.rounded())) s of \(format(last)) s"
        }
        let pose = "\(panAxis.name) \(fixed(change.pan, 2))\(panAxis.unit), \(tiltAxis.name) \(fixed(change.tilt, 2))\(tiltAxis.unit)"
        var line = "track: follows \(name) until \(end.untilText) at \(at) (\(where_)), then "
        switch end.then {
        case .hold:
            line += "holds \(pose)"
        case .pan:
            let rate = (change.panRate >= 0 ? "+" : "") + fixed(change.panRate, 4)
            line += "pans on at \(rate)\(panAxis.unit)/s from \(pose) (\(tiltAxis.name) held)"
            if let limit = change.limitSeconds, limit <= last {
                let bound = change.panRate > 0 ? change.panLimits.upperBound : change.panLimits.lowerBound
                let frame = times.firstIndex(where: { $0 >= limit }).map { " (frame \($0 + 1))" } ?? ""
                line +=
                    "; \(panAxis.name) reaches its soft limit \(format(bound))\(panAxis.unit) at \(UTCTime.text(track.startUnix + limit, dateToo: false))\(frame) and holds there"
            } else {
                line += "; \(panAxis.name) stays within its soft limits to the end"
            }
        }
        return [line]
    }
}
