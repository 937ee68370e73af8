import Foundation
import Testing

@testable import RigCore
@testable import RigFormat
@testable import RigSky

/// A program on the clock (issue 32): `"start"` as a time, a time with an offset or a sun
/// event, and keys by clock time, with their errors at their file positions.
@Suite struct ClockTimeTests {
    static let rig = #"{"axes": [{"name": "pan", "channel": 0}, {"name": "tilt", "channel": 1}]}"#
    static let turin = #""site": {"latitude": 45.07, "longitude": 7.69}"#

    func parse(_ text: String, now: Double = 1_795_000_000) throws(FileError) -> Program {
        try ProgramParser.parse(text: text, file: "p.json", loadRig: { path, at throws(FileError) in throw at.error("no rig \(path)") }, now: now)
    }

    func error(_ text: String, now: Double = 1_795_000_000) -> String {
        do {
            _ = try parse(text, now: now)
            return "parsed"
        } catch { return error.description }
    }

    static func timelapse(_ extra: String, keys: String = #"{"pan": [{"frame": 0, "value": 0}, {"frame": 9, "value": 90}]}"#, trigger: String = "interval:60")
        -> String
    {
        """
        {"rig": \(rig), "kind": "timelapse", "trigger": "\(trigger)", \(extra)
         "timelapse": {"frames": 10, "keyframes": \(keys)}}
        """
    }

    @Test func aStartIsAUTCTimeOrATimeWithItsOffset() throws {
        let utc = try parse(Self.timelapse(#""start": "2026-11-26T16:30:00Z","#))
        #expect(utc.start == ProgramStart(unix: UTCTime.parse("2026-11-26T16:30:00Z")!))
        let offset = try parse(Self.timelapse(#""start": "2026-11-26T17:30:00+01:00","#))
        #expect(offset.start?.unix == utc.start?.unix)
        #expect(try parse(Self.timelapse("")).start == nil)
    }

    @Test func aBadStartIsAnErrorAtItsPosition() {
        #expect(
            error(Self.timelapse(#""start": "2026-11-26 16:30","#)).hasPrefix(
                #"p.json:1:140: error: $.start: "2026-11-26 16:30" is not a start time in 2000–2099"#))
        #expect(error(Self.timelapse(#""start": "2026-02-30T16:30:00Z","#)).hasPrefix("p.json:1:140: error: $.start:"))
        #expect(error(Self.timelapse(#""start": 12,"#)).hasPrefix("p.json:1:140: error: $.start: expected a time"))
        // A sun event needs the site.
        #expect(
            error(Self.timelapse(#""start": {"sun": "sunset"},"#))
                == "p.json:1:140: error: $.start: a start at a sun event needs the site: give \"site\": {\"latitude\", \"longitude\"} in the program or its rig"
        )
        #expect(
            error(Self.timelapse(#""start": {"sun": "sundown"}, "# + Self.turin + ",")).hasPrefix("p.json:1:148: error: $.start.sun: \"sundown\" is not valid"))
        #expect(
            error(Self.timelapse(#""start": {"sun": "sunset", "offsetMinutes": 900}, "# + Self.turin + ",")).hasPrefix(
                "p.json:1:175: error: $.start.offsetMinutes: 900 min is out of range"))
        #expect(
            error(Self.timelapse(#""start": {"sun": "sunset", "date": "2026-13-01"}, "# + Self.turin + ",")).hasPrefix(
                #"p.json:1:166: error: $.start.date: "2026-13-01" is not a date"#))
    }

    @Test func aSunEventThatDoesNotHappenThatDayIsAnErrorNamingTheDateAndSite() {
        let svalbard = #""site": {"latitude": 78.22, "longitude": 15.65}"#
        let night = error(Self.timelapse(#""start": {"sun": "sunset", "date": "2026-12-21"}, "# + svalbard + ","))
        #expect(
            night.hasPrefix("p.json:1:148: error: $.start.sun: there is no sunset on 2026-12-21 at 78.2200°N 15.6500°E: the sun stays below -0.833° all day"),
            "\(night)")
        #expect(night.contains("polar night"))
        let day = error(Self.timelapse(#""start": {"sun": "sunrise", "date": "2026-06-21"}, "# + svalbard + ","))
        #expect(day.contains("there is no sunrise on 2026-06-21 at 78.2200°N 15.6500°E: the sun stays above -0.833° all day"), "\(day)")
        #expect(day.contains("polar day"))
        // Undated, from a now in the polar night: none within two days.
        let undated = error(Self.timelapse(#""start": {"sun": "civilDusk"}, "# + svalbard + ","), now: UTCTime.parse("2026-12-20T00:00:00Z")!)
        #expect(undated.contains("there is no civil dusk at 78.2200°N 15.6500°E in the two days from 2026-12-20 00:00:00 UTC"), "\(undated)")
    }

    @Test func aSunEventStartIsTheEventPlusItsOffsetOnThatDay() throws {
        let site = Site(latitude: 45.07, longitude: 7.69)
        let dayStart = try #require(SunEvent.dayStart(date: "2026-11-26", site: site))
        let sunset = try #require(SunTimes.events(site: site, from: dayStart, to: dayStart + 86400).first { $0.name == "sunset" }).unix
        let p = try parse(Self.timelapse(#""start": {"sun": "sunset", "offsetMinutes": -30, "date": "2026-11-26"}, "# + Self.turin + ","))
        #expect(p.start == ProgramStart(unix: sunset - 1800, event: "sunset − 30 min"))
        // Undated: the next such start after now; one already past today is tomorrow's.
        let justAfter = sunset - 1800 + 60
        let next = try parse(Self.timelapse(#""start": {"sun": "sunset", "offsetMinutes": -30}, "# + Self.turin + ","), now: justAfter)
        let start = try #require(next.start?.unix)
        #expect(start > justAfter && abs(start - (sunset - 1800) - 86400) < 300)
        let before = try parse(Self.timelapse(#""start": {"sun": "sunset", "offsetMinutes": -30}, "# + Self.turin + ","), now: sunset - 7200)
        #expect(abs((before.start?.unix ?? 0) - (sunset - 1800)) < 2)
    }

    /// The day's civil and nautical dusk and sunset, as the start resolves them, within a
    /// minute of PyEphem's (the reference the sky tests use).
    @Test(arguments: [("sunset", "sunset"), ("civilDusk", "civil dusk"), ("nauticalDusk", "nautical dusk")])
    func sunEventStartsAgreeWithPyEphem(key: String, name: String) throws {
        let site = Site(latitude: -33.86, longitude: 151.21)
        let dayStart = try #require(SunEvent.dayStart(date: "2026-12-10", site: site))
        let reference = try JSONSerialization.jsonObject(
            with: try SkyTests.runReference(["suntimes", String(site.latitude), String(site.longitude), String(dayStart)]))
        let expected = try #require((reference as? [String: Double])?[name])
        let p = try parse(
            Self.timelapse(#""start": {"sun": "\#(key)", "date": "2026-12-10"}, "site": {"latitude": -33.86, "longitude": 151.21},"#))
        let start = try #require(p.start?.unix)
        #expect(abs(start - expected) < 60, "\(key): \(start - expected) s from PyEphem")
    }

    @Test func aTrackStartsAtTheProgramsStart() throws {
        let track = """
            {"rig": \(Self.rig), "kind": "track", "trigger": "interval:60", "start": "2026-07-15T22:00:00Z",
             "site": {"latitude": 28.76, "longitude": -17.88},
             "track": {"target": "galacticCentre", "frames": 3, "mount": {"northDeg": 180}}}
            """
        let p = try parse(track)
        #expect(p.track?.startUnix == UTCTime.parse("2026-07-15T22:00:00Z"))
        let both = track.replacingOccurrences(of: #""frames": 3"#, with: #""frames": 3, "start": "2026-07-15T22:00:00Z""#)
        #expect(error(both).hasPrefix("p.json:3:62: error: $.track.start: the program's \"start\" starts the track; give the start once"), "\(error(both))")
    }

    /// A stepped track follows the clock, not the frame number: played 30 minutes late,
    /// each frame points where the target is when it is shot (the middle of its exposure),
    /// not where it was at its planned time; a redo a minute later points where it is then.
    @Test func aSteppedTrackPointsWhereTheTargetIsWhenEachFrameIsShot() throws {
        let text = """
            {"rig": {"loopRateHz": 50, "axes": [{"name": "pan", "channel": 0, "softLimits": [-90, 90]}, {"name": "tilt", "channel": 1, "softLimits": [-10, 89]}]},
             "kind": "track", "trigger": "interval:60", "settleSeconds": 0.5, "start": "2026-07-15T22:00:00Z",
             "site": {"latitude": 28.76, "longitude": -17.88},
             "track": {"target": "galacticCentre", "frames": 4, "mount": {"northDeg": 180}}}
            """
        let p = try parse(text)
        let steps = p.steps
        let track = try #require(steps.first?.aim)
        var hosted = HostedProgram(name: "t", motion: p.motion, trigger: p.trigger)
        let late = 1800.0
        hosted.startTrackClock(nowUnix: track.startUnix + late)
        #expect(hosted.trackSecondsAtStart == late)
        var player = hosted.player(rig: p.rig, from: [0, 0])
        var frame = [0.0, 0.0]
        var ticks = 0
        var readies: [(step: Int, seconds: Double, pose: [Double])] = []
        var redone = false
        while !player.isFinished, ticks < 50 * 600 {
            let event = player.tick(into: &frame)
            ticks += 1
            guard case .ready(let step)? = event else { continue }
            readies.append((step, Double(ticks) * p.rig.tickSeconds, frame))
            if step == 1, !redone {
                redone = true
                // A minute at step 2, then shoot it again.
                for _ in 0..<(50 * 60) { _ = player.tick(into: &frame) }
                ticks += 50 * 60
                player.redo()
            } else {
                player.advance()
            }
        }
        #expect(readies.map(\.step) == [0, 1, 1, 2, 3])
        for ready in readies {
            let sky = track.samples(at: [late + ready.seconds])[0]
            // Within a hundredth of a degree of the sky when it was shot (the ready tick is the shot).
            #expect(abs(ready.pose[0] - sky.pan) < 0.01 && abs(ready.pose[1] - sky.tilt) < 0.01, "\(ready) vs \(sky)")
            // Half an hour from the planned pose.
            #expect(abs(ready.pose[0] - steps[ready.step].pose[0]) > 1, "\(ready)")
        }
        // The redo moved with the sky: a minute is about a quarter of a degree.
        #expect(abs(readies[2].pose[0] - readies[1].pose[0]) > 0.05)
        // Without the clock (`rig check`, `rig plot`), the planned poses.
        var planned = Player(rig: p.rig, motion: p.motion, startPose: [0, 0])
        var at = [0.0, 0.0]
        while !planned.isFinished {
            if case .ready(let step)? = planned.tick(into: &at) {
                #expect(abs(at[0] - steps[step].pose[0]) < 1e-9)
                planned.advance()
            }
        }
    }

    // MARK: - Keys by clock time

    @Test func keyframesKeysMayBeClockTimesFromTheStart() throws {
        let text = """
            {"rig": \(Self.rig), "kind": "keyframes", "start": "2026-11-26T16:30:00Z",
             "keyframes": {"pan": [{"t": 0, "value": 0}, {"t": "2026-11-26T16:30:30Z", "value": 10}, {"t": "2026-11-26T17:31:00+01:00", "value": 20}]}}
            """
        let p = try parse(text)
        guard case .continuous(let tracks, let duration) = p.motion else { throw Failure("not continuous") }
        #expect(tracks[0]?.keys.map(\.time) == [0, 30, 60])
        #expect(duration == 60)
    }

    @Test func badClockKeysAreErrorsAtTheirPositions() {
        let noStart = """
            {"rig": \(Self.rig), "kind": "keyframes",
             "keyframes": {"pan": [{"t": 0, "value": 0}, {"t": "2026-11-26T16:30:30Z", "value": 10}]}}
            """
        #expect(
            error(noStart).hasPrefix("p.json:2:52: error: $.keyframes.pan[1].t: a key at a clock time counts from the program's start: give \"start\""),
            "\(error(noStart))")
        let before = """
            {"rig": \(Self.rig), "kind": "keyframes", "start": "2026-11-26T16:30:00Z",
             "keyframes": {"pan": [{"t": "2026-11-26T16:29:00Z", "value": 0}]}}
            """
        #expect(
            error(before) == "p.json:2:30: error: $.keyframes.pan[0].t: 2026-11-26 16:29:00 UTC is 60 s before the program's start (2026-11-26 16:30:00 UTC)")
        let order = """
            {"rig": \(Self.rig), "kind": "keyframes", "start": "2026-11-26T16:30:00Z",
             "keyframes": {"pan": [{"t": 60, "value": 0}, {"t": "2026-11-26T16:30:30Z", "value": 1}]}}
            """
        #expect(error(order).hasPrefix("p.json:2:53: error: $.keyframes.pan[1].t: t 30 does not come after the previous key's 60"), "\(error(order))")
    }

    @Test func timelapseKeysByTimeFallOnTheFramesShotThen() throws {
        // A frame a minute from 16:30: 16:33 is frame 3, 16:34:30 halfway between 4 and 5.
        let p = try parse(
            Self.timelapse(
                #""start": "2026-11-26T16:30:00Z","#,
                keys: #"{"pan": [{"t": "2026-11-26T16:33:00Z", "value": 30, "interp": "linear"}, {"t": 270, "value": 45}]}"#))
        let keys = p.steps.map { $0.pose[0] }
        #expect(keys[3] == 30)
        #expect(abs(keys[4] - 40) < 1e-9)
        #expect(keys[5] == 45)
        // Without an interval the frames have no times.
        #expect(
            error(Self.timelapse(#""start": "2026-11-26T16:30:00Z","#, keys: #"{"pan": [{"t": 30, "value": 0}]}"#, trigger: "keyboard")).hasPrefix(
                "p.json:2:58: error: $.timelapse.keyframes.pan[0].t: a timelapse key by time (\"t\") needs the frames' times"))
        // Past the last frame (frame 9, 540 s in).
        #expect(
            error(Self.timelapse(#""start": "2026-11-26T16:30:00Z","#, keys: #"{"pan": [{"t": "2026-11-26T16:40:00Z", "value": 0}]}"#)).hasPrefix(
                "p.json:2:58: error: $.timelapse.keyframes.pan[0].t: t 600 s is after the last frame, shot 540 s after the start"))
        #expect(
            error(Self.timelapse("", keys: #"{"pan": [{"frame": 0, "t": 30, "value": 0}]}"#)).hasPrefix(
                "p.json:2:70: error: $.timelapse.keyframes.pan[0].t: give the key's \"frame\" or its time \"t\", not both"))
    }

    @Test func intervalKeysByTimeRampTheIntervalWithTime() throws {
        let text = """
            {"rig": \(Self.rig), "kind": "timelapse", "trigger": "interval:5", "start": "2026-11-26T16:30:00Z",
             "timelapse": {"frames": 6, "keyframes": {"pan": [{"frame": 0, "value": 0}]},
              "intervalKeys": [{"t": "2026-11-26T16:30:10Z", "seconds": 10}, {"t": 30, "seconds": 20}]}}
            """
        let p = try parse(text)
        // t=0: 10 (held before the first key); t=10: 10; t=20: 15; t=35: 20; …
        #expect(p.stepIntervals == [10, 10, 15, 20, 20, 20])
        let mixed = text.replacingOccurrences(of: #"{"t": 30, "seconds": 20}"#, with: #"{"frame": 3, "seconds": 20}"#)
        #expect(error(mixed).hasPrefix("p.json:3:76: error: $.timelapse.intervalKeys[1].frame: these keys are by time"), "\(error(mixed))")
    }
}

struct Failure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
