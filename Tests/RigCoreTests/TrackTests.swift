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
}
