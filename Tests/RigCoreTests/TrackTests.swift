import Testing

@testable import RigCore
@testable import RigFormat
@testable import RigSky

/// `"kind": "track"`: following the sun, the moon or a star with a pan/tilt head.
@Suite struct TrackTests {
    static let rig =
        #"{"axes": [{"name": "pan", "channel": 0, "angleDeg": [-180, 180], "softLimits": [-170, 170]}, {"name": "tilt", "channel": 1, "softLimits": [-10, 90]}]}"#

    func program(_ body: String, site: String = #""site": {"latitude": 28.76, "longitude": -17.88, "elevationM": 2396},"#) throws(FileError) -> Program {
        try ProgramParser.parse(text: #"{"rig": \#(Self.rig), "kind": "track", \#(site) \#(body)}"#, file: "t.json") { _, at throws(FileError) in
            throw at.error("no rig files here")
        }
    }

    @Test func aSteppedTrackPointsAtTheTargetEveryFrame() throws {
        let p = try program(
            #""trigger": "interval:60", "track": {"target": "galacticCentre", "start": "2026-07-15T22:00:00Z", "frames": 30, "mount": {"northDeg": 180}}"#)
        #expect(p.steps.count == 30)
        let track = try #require(p.track)
        // Every step is the sky position at its frame time, through the mount.
        for (i, step) in p.steps.enumerated() {
            let position = Sky.position(of: .galacticCentre, at: track.startUnix + Double(i) * 60, site: track.site)
            #expect(abs(step.pose[1] - position.altitude) < 1e-9)
            #expect(abs((step.pose[0] + 180 - position.azimuth).remainder(dividingBy: 360)) < 1e-9)
        }
        // Pointing south (northDeg 180) near its transit: pan near 0, the core rising then setting.
        #expect(p.steps.allSatisfy { abs($0.pose[0]) < 40 })
    }

    @Test func aContinuousTrackIsAKeyframedPath() throws {
        let p = try program(#""track": {"target": "sun", "start": "2026-07-15T10:00:00Z", "durationSeconds": 1800, "keySeconds": 300}"#)
        guard case .continuous(let tracks, let duration) = p.motion else {
            Issue.record("not continuous")
            return
        }
        #expect(duration == 1800)
        #expect(tracks[0]?.keys.count == 7 && tracks[1]?.keys.count == 7)
    }

    @Test func panStaysContinuousAcrossNorth() {
        // An azimuth that crosses 0° (a circumpolar star's path through north, with north at pan 0).
        let mount = SkyMount(azimuthAxis: 0, altitudeAxis: 1, northDeg: 0, tiltOffsetDeg: 0)
        var previous: Double?
        var pans: [Double] = []
        for az in [355.0, 358, 1, 4] {
            let pose = mount.pose(for: HorizontalPosition(azimuth: az, altitude: 30), previousPan: previous)
            pans.append(pose.pan)
            previous = pose.pan
        }
        #expect(pans == [-5, -2, 1, 4])
        // Crossing ±180 from the other side: no jump of 360°.
        previous = nil
        pans = []
        let south = SkyMount(azimuthAxis: 0, altitudeAxis: 1, northDeg: 0, tiltOffsetDeg: 5)
        for az in [178.0, 181, 184] {
            let pose = south.pose(for: HorizontalPosition(azimuth: az, altitude: 30), previousPan: previous)
            pans.append(pose.pan)
            previous = pose.pan
            #expect(pose.tilt == 35)
        }
        #expect(pans == [178, 181, 184])
    }

    @Test(arguments: [
        (
            #""trigger": "interval:60", "track": {"target": "sun", "start": "2026-07-15T19:30:00Z", "frames": 120}"#,
            // 20:11 with sea-level air; at the site's 2,396 m the thinner air refracts less.
            "$.track: the sun is below the horizon at 20:10:00 UTC (frame 41)"
        ),
        (
            #""trigger": "interval:60", "track": {"target": "galacticCentre", "start": "2026-07-15T22:00:00Z", "frames": 10, "mount": {"northDeg": -30}}"#,
            "outside its soft limits -170…170°; set \"northDeg\" so the path fits"
        ),
        (
            #""track": {"target": "sun", "start": "2026-07-15T10:00:00Z", "frames": 10}"#,
            #"a stepped track takes a frame every interval: give "trigger": "interval:SECONDS""#
        ),
        (#""track": {"target": "mars", "start": "2026-07-15T10:00:00Z", "frames": 10}"#, #"$.track.target: "mars" is not valid"#),
        (#""track": {"target": "sun", "start": "yesterday", "durationSeconds": 10}"#, #""yesterday" is not a UTC time in 2000–2099"#),
        (#""track": {"target": "sun", "start": "2026-07-15T10:00:00Z"}"#, #"give "frames" (a stepped track"#),
    ])
    func badTracksSayWhenAndWhy(_ body: String, _ expected: String) {
        do {
            _ = try program(body)
            Issue.record("no error")
        } catch {
            #expect(error.description.contains(expected), "\(error.description)")
        }
    }

    @Test func aTrackWithoutASiteSaysWhereToGiveIt() {
        do {
            _ = try program(#""track": {"target": "sun", "start": "2026-07-15T10:00:00Z", "durationSeconds": 60}"#, site: "")
            Issue.record("no error")
        } catch {
            #expect(error.description.contains(#"a track needs the site: give "site": {"latitude", "longitude"} in the program or its rig"#))
        }
    }

    // MARK: - Until it sets, then hold or pan (issue 32)

    static let laPalma = Site(latitude: 28.76, longitude: -17.88, elevationM: 2396)

    /// The sunset on 2026-07-15 at La Palma by the ephemeris (`SunTimes`, as `rig plan` prints it).
    static var sunset: Double {
        let day = UTCTime.parse("2026-07-15T12:00:00Z")!
        return SunTimes.events(site: laPalma, from: day, to: day + 43_200).first { $0.name == "sunset" }!.unix
    }

    /// The sun's pose at `unix` through a mount with north at pan 0, continuous with `previous`.
    static func sunPose(_ unix: Double, previous: Double?) -> (pan: Double, tilt: Double) {
        SkyMount(azimuthAxis: 0, altitudeAxis: 1, northDeg: 0, tiltOffsetDeg: 0).pose(
            for: Sky.position(of: .sun, at: unix, site: laPalma), previousPan: previous)
    }

    /// `"until": "set"`: the frames follow the sun until the ephemeris's sunset (−0.833°,
    /// geometric), then hold the pose it set at; the frames after it say so.
    @Test func aSunTrackFollowsTheSunUntilItSetsThenHolds() throws {
        let p = try program(
            #""trigger": "interval:60", "track": {"target": "sun", "start": "2026-07-15T19:30:00Z", "frames": 120, "until": "set"}"#)
        let track = try #require(p.track)
        let change = try #require(track.changeOver)
        // The ephemeris's sunset, to the second (SunTimes bisects to a second).
        #expect(abs(track.startUnix + change.seconds - Self.sunset) < 1, "\(track.startUnix + change.seconds - Self.sunset) s")
        let geometric = Sky.position(of: .sun, at: track.startUnix + change.seconds, site: Self.laPalma, refraction: false).altitude
        #expect(abs(geometric - -0.833) < 1e-3)
        // The held pose is the sun's at the change-over (refracted, as the track points).
        let atSet = Self.sunPose(track.startUnix + change.seconds, previous: p.steps[0].pose[0])
        #expect(abs(change.pan - atSet.pan) < 1e-9 && abs(change.tilt - atSet.tilt) < 1e-9)
        var held = 0
        for (i, step) in p.steps.enumerated() {
            let t = Double(i) * 60
            if t < change.seconds {
                let sun = Self.sunPose(track.startUnix + t, previous: step.pose[0])
                #expect(abs(step.pose[0] - sun.pan) < 1e-9 && abs(step.pose[1] - sun.tilt) < 1e-9, "frame \(i + 1)")
                #expect(!step.label.contains("held"))
            } else {
                held += 1
                #expect(step.pose[0] == change.pan && step.pose[1] == change.tilt, "frame \(i + 1)")
                #expect(step.label.hasSuffix("(held)"), "\(step.label)")
            }
        }
        // 19:30 to sunset (about 20:09) followed, the rest of the two hours held.
        #expect(held > 70 && held < 90, "\(held)")
    }

    /// `"then": "pan"`: after the change-over pan goes on at the rate it had (tilt held),
    /// and stops at its soft limit.
    @Test func thenPanGoesOnAtTheLastRateUntilTheSoftLimit() throws {
        let rig =
            #"{"axes": [{"name": "pan", "channel": 0, "angleDeg": [-180, 180], "softLimits": [-170, -55]}, {"name": "tilt", "channel": 1, "softLimits": [-10, 90]}]}"#
        let p = try ProgramParser.parse(
            text: #"""
                {"rig": \#(rig), "kind": "track", "site": {"latitude": 28.76, "longitude": -17.88, "elevationM": 2396},
                 "trigger": "interval:60", "track": {"target": "sun", "start": "2026-07-15T19:30:00Z", "frames": 180, "until": {"altitude": 2}, "then": "pan"}}
                """#, file: "t.json"
        ) { _, at throws(FileError) in throw at.error("no rig files here") }
        let track = try #require(p.track)
        let change = try #require(track.changeOver)
        // Its refracted altitude (as the track points at it) is 2° then.
        #expect(abs(Sky.position(of: .sun, at: track.startUnix + change.seconds, site: Self.laPalma).altitude - 2) < 1e-4)
        // The rate is the sun's pan rate then.
        let before = Self.sunPose(track.startUnix + change.seconds - 30, previous: change.pan)
        let after = Self.sunPose(track.startUnix + change.seconds + 30, previous: change.pan)
        #expect(abs(change.panRate - (after.pan - before.pan) / 60) < 1e-5, "\(change.panRate)")
        // About 15°/h × sin(latitude) near the horizon: 0.002°/s.
        #expect(change.panRate > 0.0015 && change.panRate < 0.003, "\(change)")
        let limit = try #require(change.limitSeconds)
        var atLimit = 0
        for (i, step) in p.steps.enumerated() {
            let t = Double(i) * 60
            guard t >= change.seconds else { continue }
            #expect(step.pose[1] == change.tilt)
            let expected = min(change.pan + change.panRate * (t - change.seconds), -55)
            #expect(abs(step.pose[0] - expected) < 1e-9, "frame \(i + 1)")
            #expect(step.label.hasSuffix("(panning)"))
            if t >= limit {
                atLimit += 1
                #expect(step.pose[0] == -55)
            }
        }
        #expect(atLimit > 10, "\(atLimit)")
    }

    /// A continuous track has a key at the change-over, and holds after it.
    @Test func aContinuousTrackHasAKeyAtTheChangeOver() throws {
        let p = try program(#""track": {"target": "sun", "start": "2026-07-15T19:30:00Z", "durationSeconds": 7200, "keySeconds": 300, "until": "set"}"#)
        let change = try #require(p.track?.changeOver)
        guard case .continuous(let tracks, _) = p.motion, let pan = tracks[0] else { throw Failure("not continuous") }
        #expect(pan.keys.contains { abs($0.time - change.seconds) < 1e-9 && $0.value == change.pan })
        #expect(pan.keys.filter { $0.time >= change.seconds }.allSatisfy { $0.value == change.pan })
    }

    /// The pose on the clock (as `rig play` aims a frame): the sun's until the change-over,
    /// then the hold or the pan, frame by frame through the player on the simulated rig.
    @Test(arguments: ["hold", "pan"])
    func playedOnTheClockTheFramesChangeOverWhenTheSunSets(_ then: String) throws {
        // Four frames a minute apart around the sunset: two before it, two after.
        let start = (Self.sunset - 90).rounded()
        let text = """
            {"rig": {"loopRateHz": 50, "axes": [{"name": "pan", "channel": 0, "angleDeg": [-180, 180], "softLimits": [-170, 170]}, {"name": "tilt", "channel": 1, "softLimits": [-10, 89]}]},
             "kind": "track", "trigger": "interval:60", "settleSeconds": 0.5, "start": "\(UTCTime.isoSeconds(start))",
             "site": {"latitude": 28.76, "longitude": -17.88, "elevationM": 2396},
             "track": {"target": "sun", "frames": 4, "until": "set", "then": "\(then)"}}
            """
        let p = try ProgramParser.parse(text: text, file: "t.json", loadRig: { _, at throws(FileError) in throw at.error("no rig") }, now: start - 60)
        let track = try #require(p.track)
        let change = try #require(track.changeOver)
        var hosted = HostedProgram(name: "t", motion: p.motion, trigger: p.trigger)
        hosted.startTrackClock(nowUnix: track.startUnix)
        var player = hosted.player(rig: p.rig, from: [0, 0])
        var frame = [0.0, 0.0]
        var ticks = 0
        var readies: [(step: Int, seconds: Double, pose: [Double])] = []
        while !player.isFinished, ticks < 50 * 600 {
            let event = player.tick(into: &frame)
            ticks += 1
            guard case .ready(let step)? = event else { continue }
            readies.append((step, Double(ticks) * p.rig.tickSeconds, frame))
            player.advance()
        }
        #expect(readies.map(\.step) == [0, 1, 2, 3])
        #expect(readies.filter { $0.seconds < change.seconds }.count == 2)
        for ready in readies {
            if ready.seconds < change.seconds {
                // Within a hundredth of a degree of the sun when it was shot.
                let sun = Self.sunPose(track.startUnix + ready.seconds, previous: ready.pose[0])
                #expect(abs(ready.pose[0] - sun.pan) < 0.01 && abs(ready.pose[1] - sun.tilt) < 0.01, "\(ready) vs \(sun)")
            } else {
                let pan = then == "hold" ? change.pan : change.pan + change.panRate * (ready.seconds - change.seconds)
                #expect(abs(ready.pose[0] - pan) < 0.01 && abs(ready.pose[1] - change.tilt) < 0.01, "\(ready) vs \(change)")
                // Not where the sun is then: it goes on down under the horizon.
                let sun = Self.sunPose(track.startUnix + ready.seconds, previous: ready.pose[0])
                #expect(ready.pose[1] - sun.tilt > 0.02, "\(ready) vs \(sun)")
            }
        }
    }

    @Test(arguments: [
        (
            #""trigger": "interval:60", "track": {"target": "sun", "start": "2026-07-15T21:00:00Z", "frames": 10, "until": "set"}"#,
            "$.track.until: the sun has already set at the start (21:00:00 UTC: altitude "
        ),
        (
            #""trigger": "interval:60", "track": {"target": "sun", "start": "2026-07-15T19:30:00Z", "frames": 10, "until": {"altitude": 60}}"#,
            "$.track.until: the sun is at "
        ),
        (
            #""trigger": "interval:60", "track": {"target": "sun", "start": "2026-07-15T19:30:00Z", "frames": 10, "then": "pan"}"#,
            #"$.track.then: "then" says what follows the track's "until""#
        ),
        (
            #""trigger": "interval:60", "track": {"target": "sun", "start": "2026-07-15T19:30:00Z", "frames": 10, "until": "dusk"}"#,
            #"$.track.until: "dusk" is not valid"#
        ),
        (
            #""trigger": "interval:60", "track": {"target": "sun", "start": "2026-07-15T19:30:00Z", "frames": 10, "until": "set", "then": "spin"}"#,
            #"$.track.then: "spin" is not valid"#
        ),
    ])
    func badUntilsSayWhy(_ body: String, _ expected: String) {
        do {
            _ = try program(body)
            Issue.record("no error")
        } catch {
            #expect(error.description.contains(expected), "\(error.description)")
        }
    }
}
