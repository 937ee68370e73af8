import Foundation
import Testing

@testable import RigCore
@testable import RigFormat

/// The panorama keys of issue 34: rows and columns, an area to cover, zenith and nadir
/// shots, lenses by preset; and their mistakes, each with its line and column.
@Suite struct PanoramaKeysTests {
    /// A pan/tilt rig with the tilt axis's soft limits given.
    static func program(_ panorama: String, tiltLimits: (Double, Double) = (-90, 90)) -> String {
        """
        {
          "rig": {"axes": [{"name": "pan", "channel": 0, "angleDeg": [-180, 180], "softLimits": [-180, 180]}, {"name": "tilt", "channel": 1, "angleDeg": [-90, 90], "softLimits": [\(format(tiltLimits.0)), \(format(tiltLimits.1))]}]},
          "kind": "panorama",
          "panorama": \(panorama)
        }
        """
    }

    static func error(_ text: String) -> String {
        do {
            _ = try parseProgram(text)
            return "no error"
        } catch {
            return error.description
        }
    }

    static let lens60x40 = #"{"horizontalFovDeg": 60, "verticalFovDeg": 40}"#

    @Test func rowsAndColumnsAreSpacedEvenlyOverTheShotCentres() throws {
        let program = try parseProgram(Self.program(#"{"lens": \#(Self.lens60x40), "rows": 3, "columns": 5, "pan": [-60, 60], "tilt": [-20, 20]}"#))
        let plan = try #require(program.panorama)
        #expect(plan.rows == 3)
        #expect(plan.shotsPerRow == [5, 5, 5])
        #expect(Set(plan.shots.map(\.tiltDegrees)) == [-20, 0, 20])
        #expect(Set(plan.shots.map(\.panDegrees)) == [-60, -30, 0, 30, 60])
        // 30° apart with a 60° view: half of each shot is its neighbour's (the rows at ±20
        // have their edge nearest the horizon at 0°, so no widening); rows 20° apart of 40°.
        #expect(abs(plan.horizontalOverlap - 0.5) < 1e-12)
        #expect(abs(plan.verticalOverlap - 0.5) < 1e-12)
        // Every grid place is shot once.
        #expect(Set(plan.shots.map { "\($0.panDegrees) \($0.tiltDegrees)" }).count == 15)
    }

    @Test func columnsRoundAFullTurnShootNoPlaceTwice() throws {
        let program = try parseProgram(Self.program(#"{"lens": \#(Self.lens60x40), "columns": 8, "pan": [-180, 180], "tilt": [0, 0]}"#))
        let plan = try #require(program.panorama)
        #expect(plan.shots.map(\.panDegrees).sorted() == stride(from: -180.0, to: 180, by: 45).map { $0 })
        #expect(abs(plan.horizontalOverlap - 0.25) < 1e-12)
    }

    @Test func anAreaInsetsTheShotCentresByHalfAView() throws {
        let program = try parseProgram(Self.program(#"{"lens": \#(Self.lens60x40), "area": {"pan": [-90, 90], "tilt": [-30, 30]}, "rows": 2, "columns": 4}"#))
        let spec = try #require(program.panoramaSpec)
        #expect(spec.pan == -60...60)
        #expect(spec.tilt == -10...10)
        let plan = try #require(program.panorama)
        #expect(Set(plan.shots.map(\.panDegrees)) == [-60, -20, 20, 60])
        #expect(Set(plan.shots.map(\.tiltDegrees)) == [-10, 10])
        // The outermost shots' edges are the area's edges.
        #expect(plan.shots.map { $0.panDegrees + 30 }.max() == 90)
        #expect(plan.shots.map { $0.tiltDegrees - 20 }.min() == -30)
    }

    @Test func anAreaNarrowerThanOneViewIsOneShotInItsMiddle() throws {
        let program = try parseProgram(Self.program(#"{"lens": \#(Self.lens60x40), "area": {"pan": [10, 50], "tilt": [0, 30]}}"#))
        let plan = try #require(program.panorama)
        #expect(plan.shots.map(\.panDegrees) == [30])
        #expect(plan.shots.map(\.tiltDegrees) == [15])
    }

    @Test func zenithAndNadirAreOneShotEachAtThePoles() throws {
        // Rows at ±56 reach 76° with a 40° tall view; a zenith shot sees 20° round the
        // pole (half the narrower side), down to 70°: 6° of 40 overlap, 15 %.
        let program = try parseProgram(
            Self.program(#"{"lens": \#(Self.lens60x40), "rows": 5, "columns": 8, "pan": [-180, 180], "tilt": [-56, 56], "zenith": true, "nadir": true}"#))
        let plan = try #require(program.panorama)
        #expect(plan.shots.count == 5 * 8 + 2)
        #expect(PanoramaPlanner.shotCount(try #require(program.panoramaSpec)) == 42)
        #expect(plan.shots.filter { $0.tiltDegrees == 90 }.count == 1)
        #expect(plan.shots.filter { $0.tiltDegrees == -90 }.count == 1)
        #expect(plan.shotsPerRow == [1, 8, 8, 8, 8, 8, 1])
        #expect(abs(plan.verticalOverlap - 0.15) < 1e-12)
        // The poles come first or last: the serpentine crosses neither.
        let tilts = plan.shots.map(\.tiltDegrees)
        #expect([tilts.first, tilts.last].compactMap { $0 }.sorted() == [-90, 90])
    }

    @Test func aPoleShotAtTheAxisLimitIsUsedWhenItStillSeesThePole() throws {
        // Tilt stops at 80: a 60×40 view at 80 sees 20 − 10 = 10° round the zenith, and
        // the top row at 70 reaches 90: (90 − 80) / 40 = 25 % overlap.
        let text = Self.program(#"{"lens": \#(Self.lens60x40), "pan": [-180, 180], "tilt": [30, 70], "zenith": true}"#, tiltLimits: (-90, 80))
        let plan = try #require(try parseProgram(text).panorama)
        #expect(plan.shots.filter { $0.tiltDegrees == 80 }.count == 1)
        #expect(plan.shots.allSatisfy { $0.tiltDegrees <= 80 })
        #expect(abs(plan.verticalOverlap - 0.25) < 1e-12)
    }

    @Test func presetsAreASensorAndAFocalLength() throws {
        let canon = try #require(try parseProgram(Self.program(#"{"lens": "aps-c-canon-18mm", "pan": [0, 0], "tilt": [0, 0]}"#)).panoramaSpec)
        let expected = FieldOfView(focalLengthMillimetres: 18, sensorWidthMillimetres: 22.3, sensorHeightMillimetres: 14.9)
        #expect(canon.fieldOfView == expected)
        #expect(canon.lens?.focalLengthMillimetres == 18)
        #expect(canon.lens?.sensorWidthMillimetres == 22.3)

        let portrait = try #require(
            try parseProgram(Self.program(#"{"lens": {"preset": "fullframe-24mm", "orientation": "portrait"}, "pan": [0, 0], "tilt": [0, 0]}"#))
                .panoramaSpec)
        let fullFrame = FieldOfView(focalLengthMillimetres: 24, sensorWidthMillimetres: 36, sensorHeightMillimetres: 24)
        #expect(portrait.fieldOfView.horizontalDegrees == fullFrame.verticalDegrees)
        #expect(portrait.fieldOfView.verticalDegrees == fullFrame.horizontalDegrees)
        #expect(portrait.lens?.orientation == .portrait)

        // The same lens by preset and by focal length plans the same shots.
        let byName = try parseProgram(Self.program(#"{"lens": "mft-12mm", "pan": [-90, 90], "tilt": [-20, 20]}"#))
        let byNumbers = try parseProgram(
            Self.program(#"{"lens": {"focalLengthMm": 12, "sensorWidthMm": 17.3, "sensorHeightMm": 13}, "pan": [-90, 90], "tilt": [-20, 20]}"#))
        #expect(byName.panorama == byNumbers.panorama)
        for sensor in LensPreset.sensors {
            #expect((try? LensPreset.named("\(sensor.name)-35mm").get())?.sensor == sensor)
        }
    }

    static let mistakes: [(String, String)] = [
        (
            program(#"{"lens": {"horizontalFovDeg": 60, "verticalFovDeg": 40}, "columns": 3, "pan": [-90, 90], "tilt": [0, 0]}"#),
            #"p.json:4:83: error: $.panorama.columns: 3 columns over pan -90…90° overlap -50.0% with this lens; valid: at least 5 columns (10% overlap or more)"#
        ),
        (
            program(#"{"lens": {"horizontalFovDeg": 60, "verticalFovDeg": 40}, "rows": 2, "pan": [0, 0], "tilt": [-40, 40]}"#),
            #"p.json:4:80: error: $.panorama.rows: 2 rows over tilt -40…40° overlap -100.0% with this lens; valid: at least 4 rows (10% overlap or more)"#
        ),
        (
            program(#"{"lens": "fulframe-24mm", "pan": [0, 0], "tilt": [0, 0]}"#),
            #"p.json:4:24: error: $.panorama.lens: no lens preset "fulframe-24mm" (did you mean "fullframe"?); valid: SENSOR-FOCALmm, SENSOR one of fullframe, aps-c, aps-c-canon, mft, 1-inch (e.g. "fullframe-24mm", "aps-c-18mm")"#
        ),
        (
            program(#"{"lens": {"preset": "mft-12"}, "pan": [0, 0], "tilt": [0, 0]}"#),
            #"p.json:4:35: error: $.panorama.lens.preset: "mft-12": after the sensor "mft" comes the focal length, as in "mft-24mm"; valid: SENSOR-FOCALmm, SENSOR one of fullframe, aps-c, aps-c-canon, mft, 1-inch (e.g. "fullframe-24mm", "aps-c-18mm")"#
        ),
        (
            program(#"{"lens": {"preset": "mft-12mm", "focalLengthMm": 12}, "pan": [0, 0], "tilt": [0, 0]}"#),
            #"p.json:4:64: error: $.panorama.lens.focalLengthMm: a preset gives the focal length and sensor; remove "focalLengthMm" (or the preset)"#
        ),
        (
            program(#"{"lens": "fullframe-24mm", "pan": [0, 0], "tilt": [0, 30], "zenith": true}"#, tiltLimits: (-40, 45)),
            #"p.json:4:84: error: $.panorama.zenith: a zenith shot looks straight up, but tilt axis "tilt" stops at its soft limit 45° (softLimits); with this lens a shot there cannot see the pole; valid: a soft limit of at least 63.4° up (or a wider lens), or remove "zenith""#
        ),
        (
            program(#"{"lens": {"horizontalFovDeg": 60, "verticalFovDeg": 40}, "pan": [-180, 180], "tilt": [-20, 0], "nadir": true}"#),
            #"p.json:4:119: error: $.panorama.nadir: the nadir shot (tilt -90°) and the bottom row (tilt -20.0°) overlap -75.0%; valid: a bottom row at tilt -54.0° or lower (10% overlap or more)"#
        ),
        (
            program(#"{"lens": "fullframe-24mm", "area": {"pan": [0, 90], "tilt": [0, 30]}, "pan": [0, 90]}"#),
            #"p.json:4:92: error: $.panorama.pan: give the shot centres ("pan" and "tilt") or the "area" to cover, not both"#
        ),
        (
            program(#"{"lens": "fullframe-24mm", "rows": 2, "columns": 3, "overlapPercent": 30, "pan": [0, 90], "tilt": [0, 30]}"#),
            #"p.json:4:85: error: $.panorama.overlapPercent: with both "rows" and "columns" the overlap is what they give; remove "overlapPercent" (or one of them)"#
        ),
        (
            program(#"{"lens": "fullframe-24mm", "columns": 1, "pan": [0, 90], "tilt": [0, 0]}"#),
            #"p.json:4:53: error: $.panorama.columns: 1 of columns would be one shot at the middle of pan 0…90°; valid: 2 or more, or a single pan ([0, 0])"#
        ),
        (
            program(#"{"lens": "fullframe-24mm", "rows": 1.5, "pan": [0, 90], "tilt": [0, 0]}"#),
            #"p.json:4:50: error: $.panorama.rows: expected an integer, found 1.5"#
        ),
    ]

    @Test(arguments: mistakes.indices) func mistakesNameTheLineTheKeyAndWhatIsValid(_ index: Int) {
        let (text, expected) = Self.mistakes[index]
        #expect(Self.error(text) == expected)
    }

    /// The examples in rigs/ with the new keys plan what their descriptions say.
    @Test func theExamplesPlanTheirShots() throws {
        let rows = try loadExample("rigs/pano-rows.json")
        #expect(rows.panorama?.shotsPerRow == [5, 5])
        let sphere = try loadExample("rigs/pano-sphere.json")
        let plan = try #require(sphere.panorama)
        #expect(plan.shots.first?.tiltDegrees == -90 || plan.shots.first?.tiltDegrees == 90)
        #expect(plan.shots.filter { abs($0.tiltDegrees) == 90 }.count == 2)
        #expect(plan.verticalOverlap >= ProgramParser.minimumOverlap)
    }

    func loadExample(_ relative: String) throws -> Program {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let text = try String(contentsOf: root.appendingPathComponent(relative), encoding: .utf8)
        return try ProgramParser.parse(text: text, file: relative) { path, _ throws(FileError) in
            let full = root.appendingPathComponent("rigs").appendingPathComponent(path).path
            return ((try? String(contentsOfFile: full, encoding: .utf8)) ?? "", full)
        }
    }
}
