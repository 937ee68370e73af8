import Foundation
import Testing

@testable import RigCore
@testable import RigStitch

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// Parses an SVG with Foundation's XMLParser and counts elements by name and by class.
private final class SVGCensus: NSObject, XMLParserDelegate {
    var elements: [String: Int] = [:]
    var classes: [String: Int] = [:]
    var polylinePointCounts: [Int] = []
    /// Where the red dots are: (cx, cy) of each `class="violation"`.
    var violationCentres: [(x: Double, y: Double)] = []
    var texts: [String] = []
    private var inText = false

    func parser(
        _ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
        attributes: [String: String] = [:]
    ) {
        elements[name, default: 0] += 1
        for c in (attributes["class"] ?? "").split(separator: " ") { classes[String(c), default: 0] += 1 }
        if attributes["class"] == "violation", let x = attributes["cx"].flatMap(Double.init), let y = attributes["cy"].flatMap(Double.init) {
            violationCentres.append((x, y))
        }
        if name == "polyline" { polylinePointCounts.append((attributes["points"] ?? "").split(separator: " ").count) }
        inText = name == "text" || name == "title"
        if inText { texts.append("") }
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) {
        if inText, !texts.isEmpty { texts[texts.count - 1] += string }
    }

    func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
        inText = false
    }

    static func of(_ svg: String) -> SVGCensus? {
        let census = SVGCensus()
        let parser = XMLParser(data: Data(svg.utf8))
        parser.delegate = census
        return parser.parse() ? census : nil
    }
}

@Suite struct PlotRendererTests {
    let rig = simRig([
        servoAxis("pan", channel: 0, softMin: -45, softMax: 45),
        servoAxis("tilt", channel: 1, softMin: -30, softMax: 30, maxVelocity: 60, maxAcceleration: 120),
        servoAxis("roll", channel: 2),
    ])

    func program(_ motion: Motion, file: String = "programs/sweep.json", rig: Rig? = nil) -> Program {
        Program(
            file: file, rig: rig ?? self.rig, kind: .keyframes, motion: motion, trigger: .keyboard, stopRecipeAtEnd: false, panorama: nil, settleSeconds: 0.5)
    }

    /// Feasible: pan −40 → 40 in 4 s (peak 30°/s, 30°/s²), tilt 0 → 20 → 0.
    var feasible: Motion {
        .continuous(
            tracks: [
                AxisTrack(keys: [Keyframe(time: 0, value: -40), Keyframe(time: 4, value: 40)]),
                AxisTrack(keys: [Keyframe(time: 0, value: 0), Keyframe(time: 2, value: 20), Keyframe(time: 4, value: 0)]),
                nil,
            ],
            durationSeconds: 4)
    }

    @Test func feasibleProgramParsesAndHasNoRed() throws {
        let p = program(feasible)
        #expect(FeasibilityChecker.check(rig: rig, motion: feasible, startPose: [0, 0, 0]).feasible)
        let svg = PlotRenderer.svg(program: p, startPose: [0, 0, 0])
        let census = try #require(SVGCensus.of(svg), "the SVG is well-formed XML")
        #expect(census.elements["svg"] == 1)
        #expect(census.classes["axis"] == 3, "one group per axis")
        #expect(census.classes["panel"] == 9, "a position, a velocity and an acceleration panel per axis")
        #expect(census.classes["position"] == 3 && census.classes["velocity"] == 3 && census.classes["acceleration"] == 3)
        #expect(census.classes["violation"] == nil)
        #expect(!svg.contains("#d62728") && !svg.lowercased().contains("red"))
        // Keys: 2 on pan, 3 on tilt, none on roll. Velocity limits: two dashed lines per axis.
        #expect(census.classes["keyframe"] == 5)
        #expect(census.classes["velocity-limit"] == 6)
        #expect(census.classes["acceleration-limit"] == 6)
        #expect(census.classes["outside-limits"] == 6)
        #expect(census.texts.contains { $0.contains("programs/sweep.json") && $0.contains("\"test\"") }, "title names file and rig")
        #expect(census.texts.contains("position (°)") && census.texts.contains("velocity (°/s)") && census.texts.contains("time (s)"))
        #expect(census.texts.contains("acceleration (°/s²)"))
        // Self-contained: no links, scripts, external fonts or images.
        #expect(!svg.contains("<script") && !svg.contains("href") && !svg.contains("@import") && !svg.contains("<image"))
    }

    @Test func everyPixelWithAViolatingFrameGetsARedMarkerEvenWhenLinesAreThinned() throws {
        // pan 0 → 60 → 0 over 40 s at 500 Hz: slow (peak 1.5·60/20 = 4.5°/s) but beyond the
        // 45° soft limit for a long stretch; 20 000 frames, far more than a line keeps.
        let fast = simRig(rig.axes, loopRateHz: 500)
        let motion: Motion = .continuous(
            tracks: [AxisTrack(keys: [Keyframe(time: 0, value: 0), Keyframe(time: 20, value: 60), Keyframe(time: 40, value: 0)]), nil, nil],
            durationSeconds: 40)
        let run = drive(rig: fast, motion: motion, startPose: [0, 0, 0])
        // Independent count: frames where pan is beyond 45° (with LimitMonitor's 1e-6·span slack).
        let beyond = run.frames.filter { $0[0] > 45 + 90e-6 }.count
        #expect(beyond > 2000)
        let svg = PlotRenderer.svg(program: program(motion, rig: fast), startPose: [0, 0, 0])
        let census = try #require(SVGCensus.of(svg))
        // One dot per pixel: fewer dots than frames, but no pixel column of the violating
        // stretch without red, and the red spans the stretch's share of the time axis.
        let dots = census.violationCentres
        #expect(dots.count > 0 && dots.count < beyond)
        let columns = Set(dots.map { Int($0.x.rounded()) }).sorted()
        #expect(zip(columns, columns.dropFirst()).allSatisfy { $1 - $0 <= 1 }, "a gap in the red: \(columns)")
        let span = Double((columns.last ?? 0) - (columns.first ?? 0) + 1) / 852  // the plot is 852 px wide
        let share = Double(beyond) / Double(run.frames.count)
        #expect(abs(span - share) < 0.02, "red over \(span) of the width, violations over \(share) of the frames")
        #expect(svg.contains("#d62728"))
        #expect(census.polylinePointCounts.allSatisfy { $0 <= PlotRenderer.maxPointsPerLine })
        #expect(census.polylinePointCounts.count == 9)
    }

    /// A hostile program (50,000 keyframes that break every limit at every frame) still
    /// draws a plot of a few MB: every mark is thinned to one per pixel.
    @Test func aProgramOfManyKeyframesAndViolationsMakesABoundedPlot() throws {
        let keys = (0..<50_000).map { Keyframe(time: Double($0) * 0.02, value: $0 % 2 == 0 ? -80 : 80) }
        let motion: Motion = .continuous(tracks: [AxisTrack(keys: keys), AxisTrack(keys: keys), nil], durationSeconds: keys.last?.time ?? 0)
        let svg = PlotRenderer.svg(program: program(motion), startPose: [0, 0, 0])
        #expect(svg.utf8.count < 5_000_000, "\(svg.utf8.count) bytes")
        let census = try #require(SVGCensus.of(svg))
        #expect((census.classes["violation"] ?? 0) > 0)
        #expect((census.classes["keyframe"] ?? 0) > 0 && (census.classes["keyframe"] ?? 0) < 2 * 50_000)
    }

    @Test func velocityAndAccelerationViolationsAreMarked() throws {
        // 0 → 40° in 0.3 s on tilt (60°/s max): a smooth segment peaks at 1.5·40/0.3 = 200°/s.
        let motion: Motion = .continuous(
            tracks: [nil, AxisTrack(keys: [Keyframe(time: 0, value: 0), Keyframe(time: 0.3, value: 25)]), nil],
            durationSeconds: 0.3)
        #expect(!FeasibilityChecker.check(rig: rig, motion: motion, startPose: [0, 0, 0]).feasible)
        let svg = PlotRenderer.svg(program: program(motion), startPose: [0, 0, 0])
        let census = try #require(SVGCensus.of(svg))
        #expect((census.classes["violation"] ?? 0) > 0)
        #expect(census.texts.contains { $0.hasSuffix("maxVelocity") || $0.hasSuffix("maxAcceleration") })
    }

    @Test func steppedProgramMarksEachArrival() throws {
        let steps = [[10.0, 5, 0], [-20, 10, 0], [30, -10, 5]].enumerated().map { Step(pose: $1, settleSeconds: 0.2, label: "step \($0 + 1)") }
        let p = Program(
            file: "s.json", rig: rig, kind: .steps, motion: .stepped(steps), trigger: .auto, stopRecipeAtEnd: false, panorama: nil, settleSeconds: 0.5)
        let census = try #require(SVGCensus.of(PlotRenderer.svg(program: p, startPose: [0, 0, 0])))
        // One dotted line per arrival in each of the 9 panels.
        #expect(census.classes["step-arrival"] == 3 * 9)
        #expect(census.classes["keyframe"] == nil)
        #expect(census.classes["violation"] == nil)
    }

    @Test func namesAreEscaped() throws {
        let odd = Rig(name: "<bench & \"co\">", axes: [servoAxis("pan", channel: 0)], output: .sim)
        let motion: Motion = .continuous(tracks: [AxisTrack(keys: [Keyframe(time: 0, value: 0), Keyframe(time: 3, value: 10)])], durationSeconds: 3)
        let svg = PlotRenderer.svg(program: program(motion, file: "a&b <1>.json", rig: odd), startPose: [0])
        let census = try #require(SVGCensus.of(svg))
        #expect(census.texts.contains { $0.contains("a&b <1>.json") && $0.contains("<bench & \"co\">") })
    }

    @Test func emptyStepListStillDraws() throws {
        let p = Program(file: "e.json", rig: rig, kind: .steps, motion: .stepped([]), trigger: .auto, stopRecipeAtEnd: false, panorama: nil, settleSeconds: 0.5)
        let census = try #require(SVGCensus.of(PlotRenderer.svg(program: p, startPose: [0, 0, 0])))
        #expect(census.classes["panel"] == 9)
    }

    @Test func decimationKeepsExtremesAndEnds() {
        var values = (0..<100_000).map { sin(Double($0) / 500) }
        values[31_337] = 50
        values[77_777] = -50
        let kept = decimatedIndices(values: values, limit: 2000)
        #expect(kept.count <= 2000)
        #expect(kept.first == 0 && kept.last == values.count - 1)
        #expect(kept.contains(31_337) && kept.contains(77_777))
        #expect(kept == kept.sorted())
        #expect(decimatedIndices(values: [1, 2, 3], limit: 2000) == [0, 1, 2])
    }
}

@Suite struct PlotRendererPanoramaTests {
    @Test func panoramaIsPlottedFromTheStartPose() throws {
        // 4 shots at pan −60, −20, 20, 60 (see PanoramaPlannerTests.singleRowOnTheHorizon).
        // Started at pan 50, the row runs from +60 down: the first arrival is at 60.
        let p = try parseProgram(
            """
            {"rig": {"axes": [{"name": "pan", "channel": 0}, {"name": "tilt", "channel": 1}]}, "kind": "panorama",
             "panorama": {"lens": {"horizontalFovDeg": 60, "verticalFovDeg": 40}, "overlapPercent": 30, "pan": [-60, 60], "tilt": [0, 0]}}
            """)
        let svg = PlotRenderer.svg(program: p, startPose: [50, 0])
        let samples = PlotSamples(program: p.startingFrom([50, 0]), startPose: [50, 0], maxTicks: 1_000_000)
        let first = try #require(samples.stepArrivals.first)
        let index = try #require(samples.times.firstIndex(of: first.time))
        #expect(samples.axes[0].positions[index] == 60)
        #expect(svg.components(separatedBy: "class=\"step-arrival\"").count - 1 == 4 * 6)  // 4 shots × 2 axes × 3 panels
    }
}

extension PlotRendererTests {
    /// A paced timelapse with a ramp and a start on the clock draws its frames' light under
    /// the axes: the planned exposure, the interval (ramped by intervalKeys) and the sun's
    /// altitude, with the horizon marked; a keyframes program draws none.
    @Test func aTimelapseOnTheClockDrawsExposureIntervalAndTheSun() throws {
        let text = #"""
            {"rig": {"loopRateHz": 50, "axes": [{"name": "pan", "channel": 0, "maxVelocity": 30}],
                     "camera": {"type": "sim"}, "site": {"latitude": 47.37, "longitude": 8.54}},
             "kind": "timelapse", "trigger": "interval:10", "start": "2026-11-26T15:30:00Z",
             "shoot": {"bulb": true, "ramp": {"mode": "keys", "keys": [{"frame": 0, "ev": 12}, {"frame": 59, "ev": 4}], "aperture": 2.8, "maxShutterSeconds": 4}},
             "timelapse": {"frames": 60, "keyframes": {"pan": [{"frame": 0, "value": -5}, {"frame": 59, "value": 5}]},
                           "intervalKeys": [{"frame": 0, "seconds": 10}, {"frame": 59, "seconds": 20}]}}
            """#
        let program = try parseProgram(text)
        let census = try #require(SVGCensus.of(PlotRenderer.svg(program: program, startPose: [0])))
        #expect(census.classes["light"] == 1)
        for panel in ["exposure", "interval", "sun"] { #expect(census.classes[panel] == 1, "\(panel)") }
        #expect(census.classes["sun-mark"] == 2)
        #expect(census.texts.contains("time into the shoot (s)"))
        #expect(census.texts.contains { $0.hasPrefix("frames on the clock") })
        // Without a start the sun is not drawn (it would be 1970's).
        let unclocked = try parseProgram(text.replacingOccurrences(of: #""start": "2026-11-26T15:30:00Z","#, with: ""))
        let noSun = try #require(SVGCensus.of(PlotRenderer.svg(program: unclocked, startPose: [0])))
        #expect(noSun.classes["sun"] == nil && noSun.classes["interval"] == 1)
        let keyframes = try #require(SVGCensus.of(PlotRenderer.svg(program: self.program(feasible), startPose: [0, 0, 0])))
        #expect(keyframes.classes["light"] == nil)
    }
}
