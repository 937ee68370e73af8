import Foundation
import PropertyBased
import Testing

@testable import RigCore
@testable import RigSky

@Suite struct PanoramaPlannerTests {
    func spec(h: Double = 60, v: Double = 40, overlap: Double, pan: ClosedRange<Double>, tilt: ClosedRange<Double>) -> PanoramaSpec {
        PanoramaSpec(
            fieldOfView: FieldOfView(horizontalDegrees: h, verticalDegrees: v), overlap: overlap,
            pan: pan, tilt: tilt, panAxis: 0, tiltAxis: 1)
    }

    @Test func singleRowOnTheHorizon() {
        // 60° lens, 30 % overlap: at most 42° between shots. 120° of pan needs ⌈120/42⌉ = 3
        // gaps → 4 shots, 40° apart, real overlap 1 − 40/60 = 1/3.
        // Start at pan 50: the +60 end is nearer, so the row runs backwards.
        let plan = PanoramaPlanner.plan(spec(overlap: 0.3, pan: -60...60, tilt: 0...0), currentPan: 50, currentTilt: 0)
        #expect(plan.rows == 1)
        #expect(plan.shots.map(\.panDegrees) == [60, 20, -20, -60])
        #expect(plan.shots.allSatisfy { $0.tiltDegrees == 0 })
        #expect(abs(plan.horizontalOverlap - 1.0 / 3) < 1e-12)
        #expect(plan.verticalOverlap == 1)
        let forward = PanoramaPlanner.plan(spec(overlap: 0.3, pan: -60...60, tilt: 0...0), currentPan: -50, currentTilt: 0)
        #expect(forward.shots.map(\.panDegrees) == [-60, -20, 20, 60])
    }

    /// 60×40° lens, 25 % overlap, full circle, tilt 0…90:
    /// rows every ≤ 30° → ⌈90/30⌉ = 3 gaps → rows at 0, 30, 60, 90 (vertical overlap 1 − 30/40 = 25 %).
    /// Pan step ≤ 45°·1/cos(edge), edge = |tilt| − 20 (the row's edge nearest the horizon):
    ///   row 0:  edge < 0 → 45°       → ⌈360/45⌉ = 8 shots
    ///   row 30: edge 10° → 45.69°    → ⌈7.88⌉ = 8 shots
    ///   row 60: edge 40° → 58.74°    → ⌈6.13⌉ = 7 shots
    ///   row 90: at the zenith one shot sees the whole cap → 1 shot.
    var sphere: PanoramaPlan {
        PanoramaPlanner.plan(spec(overlap: 0.25, pan: 0...360, tilt: 0...90), currentPan: 0, currentTilt: 0)
    }

    @Test func rowsAndShotsOfAFullSphere() {
        let plan = sphere
        #expect(plan.rows == 4)
        #expect(plan.shotsPerRow == [8, 8, 7, 1])
        #expect(plan.shots.count == 24)
        #expect(abs(plan.verticalOverlap - 0.25) < 1e-12)
        var tilts: [Double] = []
        for shot in plan.shots where tilts.last != shot.tiltDegrees { tilts.append(shot.tiltDegrees) }
        #expect(tilts == [0, 30, 60, 90])
    }

    @Test func poleShotsKeepThePanAndRowsStartNearTheLastShot() {
        // Zenith after row 60 (which ran forwards and ended at 360 − 360/7): no pan move.
        let up = sphere.shots
        #expect(up[up.count - 1].panDegrees == up[up.count - 2].panDegrees)
        #expect(abs(up[up.count - 2].panDegrees - (360 - 360.0 / 7)) < 1e-9)
        // Tilt −90…90: rows every 30° → 7 rows, starting at the nadir (a tie from tilt 0 goes
        // to the low end). The nadir shot stays at the start pan 100; the next row starts at
        // its end nearest 100, rather than alternating blindly.
        let whole = PanoramaPlanner.plan(spec(overlap: 0.25, pan: 0...360, tilt: -90...90), currentPan: 100, currentTilt: 0)
        #expect(whole.rows == 7)
        #expect(whole.shots[0].tiltDegrees == -90 && whole.shots[0].panDegrees == 100)
        // Row −60: edge 40° → 7 shots at 0, 51.4, …, 308.6; 0 is nearer to 100 than 308.6.
        #expect(whole.shots[1].tiltDegrees == -60 && whole.shots[1].panDegrees == 0)
        // A pole shot outside the pan range is clamped into it.
        let clamped = PanoramaPlanner.plan(spec(overlap: 0.25, pan: -30...30, tilt: 90...90), currentPan: 80, currentTilt: 90)
        #expect(clamped.shots.map(\.panDegrees) == [30])
    }

    @Test func fullCircleRowsHaveNoDuplicateShot() {
        for row in 0..<3 {
            let pans = sphere.shots.filter { $0.row == row }.map(\.panDegrees).sorted()
            // Evenly spaced around the circle, and the last is not the first again at +360°.
            let spacing = 360 / Double(pans.count)
            for (k, pan) in pans.enumerated() { #expect(abs(pan - Double(k) * spacing) < 1e-9) }
            #expect(pans.allSatisfy { $0 < 360 - 1e-9 })
            let wrapped = Set(pans.map { (($0.truncatingRemainder(dividingBy: 360)) * 1e6).rounded() })
            #expect(wrapped.count == pans.count)
        }
    }

    @Test func serpentineFromTheNearestCorner() {
        let plan = sphere
        // Starting at pan 0, tilt 0: row 0 forwards, row 30 backwards, row 60 forwards, zenith.
        let rows = plan.shots.map(\.row)
        #expect(rows == Array(repeating: 0, count: 8) + Array(repeating: 1, count: 8) + Array(repeating: 2, count: 7) + [3])
        let row0 = plan.shots.filter { $0.row == 0 }.map(\.panDegrees)
        let row1 = plan.shots.filter { $0.row == 1 }.map(\.panDegrees)
        let row2 = plan.shots.filter { $0.row == 2 }.map(\.panDegrees)
        #expect(row0 == row0.sorted())
        #expect(row1 == row1.sorted(by: >))
        #expect(row2 == row2.sorted())
        // Starting near the top right corner of a partial grid: the top row first, right to left.
        let grid = PanoramaPlanner.plan(spec(overlap: 0.25, pan: -90...90, tilt: -30...30), currentPan: 80, currentTilt: 25)
        // Tilt: ⌈60/30⌉ = 2 gaps → rows −30, 0, 30.
        #expect(grid.rows == 3)
        let first = grid.shots[0]
        #expect(first.tiltDegrees == 30 && first.panDegrees == 90)
        let last = grid.shots[grid.shots.count - 1]
        #expect(last.tiltDegrees == -30)
        // Every move between shots in a row is one step; between rows the pan stays put.
        for k in 1..<grid.shots.count where grid.shots[k].row == grid.shots[k - 1].row {
            #expect(abs(grid.shots[k].column - grid.shots[k - 1].column) == 1)
        }
    }

    @Test func realOverlapIsAtLeastTheRequested() {
        for overlap in [0.1, 0.25, 0.3, 0.5, 0.7] {
            for tilt in [0.0...0.0, -20.0...45.0, 0.0...80.0] {
                for pan in [-100.0...100.0, 0.0...360.0, 10.0...37.0] {
                    let s = spec(h: 50, v: 35, overlap: overlap, pan: pan, tilt: tilt)
                    let plan = PanoramaPlanner.plan(s, currentPan: 0, currentTilt: 0)
                    #expect(plan.horizontalOverlap >= overlap - 1e-9)
                    #expect(plan.verticalOverlap >= overlap - 1e-9)
                    // Recompute the horizontal overlap of each row from its shots: a frame
                    // spans hfov/cos(edge) degrees of pan at the row's edge nearest the horizon.
                    for row in 0..<plan.rows {
                        let shots = plan.shots.filter { $0.row == row }
                        let pans = shots.map(\.panDegrees).sorted()
                        guard pans.count > 1, let tiltDeg = shots.first?.tiltDegrees else { continue }
                        let edge = max(0, abs(tiltDeg) - 35.0 / 2)
                        let span = 50 / cos(edge * .pi / 180)
                        var gaps = zip(pans.dropFirst(), pans).map { $0 - $1 }
                        if pan.upperBound - pan.lowerBound >= 360, let f = pans.first, let l = pans.last { gaps.append(f + 360 - l) }
                        for gap in gaps { #expect(1 - gap / span >= overlap - 1e-9, "row \(row) gap \(gap)") }
                    }
                    // Rows: the tilt gaps leave at least the overlap of the vertical fov.
                    let tilts = Array(Set(plan.shots.map(\.tiltDegrees))).sorted()
                    for (a, b) in zip(tilts, tilts.dropFirst()) { #expect(1 - (b - a) / 35 >= overlap - 1e-9) }
                    #expect(tilts.first == tilt.lowerBound && tilts.last == tilt.upperBound)
                }
            }
        }
    }

    @Test func portraitSwapsTheFieldOfView() throws {
        // 50 mm on 36×24: hfov = 2·atan(18/50) = 39.60°, vfov = 2·atan(12/50) = 26.99°.
        // Pan −45…45, tilt 0…20, 30 % overlap:
        //   landscape: pan step 27.72° → ⌈90/27.72⌉ = 4 gaps → 5 per row; tilt step 18.89° → ⌈1.06⌉ = 2 gaps → 3 rows
        //   portrait:  pan step 18.89° → ⌈4.76⌉ = 5 gaps → 6 per row; tilt step 27.72° → 1 gap → 2 rows
        // (rows at ≤ 20° have edges below the horizon... row 20 in portrait: edge 20 − 19.8 ≈ 0.2°, widening 1.00001.)
        func program(_ orientation: String) -> String {
            """
            {"rig": {"axes": [{"name": "pan", "channel": 0}, {"name": "tilt", "channel": 1}]},
             "kind": "panorama",
             "panorama": {"lens": {"focalLengthMm": 50, "orientation": "\(orientation)"},
                          "overlapPercent": 30, "pan": [-45, 45], "tilt": [0, 20]}}
            """
        }
        let landscape = try #require(try parseProgram(program("landscape")).panorama)
        let portrait = try #require(try parseProgram(program("portrait")).panorama)
        #expect(landscape.shotsPerRow == [5, 5, 5])
        #expect(portrait.shotsPerRow == [6, 6])
        #expect(portrait.horizontalOverlap >= 0.3 && landscape.verticalOverlap >= 0.3)
    }

    @Test func panoramaProgramBecomesSteps() throws {
        let program = try parseProgram(
            """
            {"rig": {"axes": [{"name": "tilt", "channel": 3, "home": 10}, {"name": "pan", "channel": 0},
                              {"name": "light", "kind": "pwm", "channel": 5, "home": 40}]},
             "kind": "panorama", "settleSeconds": 1.5,
             "panorama": {"lens": {"horizontalFovDeg": 60, "verticalFovDeg": 40}, "overlapPercent": 30,
                          "pan": [60, -60], "tilt": [10, 10]}}
            """)
        // Same plan as singleRowOnTheHorizon (the pan range is given backwards), started from
        // home pan 0: a tie between the ends goes to the low end.
        #expect(program.steps.map(\.pose) == [[10, -60, 40], [10, -20, 40], [10, 20, 40], [10, 60, 40]])
        #expect(
            program.steps.map(\.label) == [
                "shot 1 (row 1, column 1)", "shot 2 (row 1, column 2)",
                "shot 3 (row 1, column 3)", "shot 4 (row 1, column 4)",
            ])
        #expect(program.steps.allSatisfy { $0.settleSeconds == 1.5 })
        #expect(program.trigger == .keyboard)
    }
}

@Suite struct PanoramaPlanPropertyTests {
    @Test func everyPlanCoversItsRangesOnceInSerpentineOrder() async {
        let specs = Generator(run: { rng in
            var g = SplitMix64(seed: rng.next())
            let h = Double.random(in: 5...120, using: &g)
            let v = Double.random(in: 5...100, using: &g)
            let panStart = Double.random(in: -180...0, using: &g)
            let panSpan = Bool.random(using: &g) ? 360 : Double.random(in: 0...300, using: &g)
            let t0 = Double.random(in: -90...90, using: &g)
            let t1 = Double.random(in: -90...90, using: &g)
            return (
                PanoramaSpec(
                    fieldOfView: FieldOfView(horizontalDegrees: h, verticalDegrees: v),
                    overlap: Double.random(in: 0.05...0.9, using: &g), pan: panStart...(panStart + panSpan),
                    tilt: min(t0, t1)...max(t0, t1), panAxis: 0, tiltAxis: 1),
                Double.random(in: -200...200, using: &g), Double.random(in: -90...90, using: &g)
            )
        })
        await propertyCheck(count: 300, input: specs) { spec, pan, tilt in
            let plan = PanoramaPlanner.plan(spec, currentPan: pan, currentTilt: tilt)
            #expect(plan.shots.count == plan.shotsPerRow.reduce(0, +))
            #expect(plan.horizontalOverlap >= spec.overlap - 1e-9)
            #expect(plan.verticalOverlap >= spec.overlap - 1e-9)
            var seen = Set<[Int]>()
            var rowsVisited: [Int] = []
            for (k, shot) in plan.shots.enumerated() {
                #expect(seen.insert([shot.row, shot.column]).inserted, "shot \(k) repeats")
                #expect(shot.panDegrees >= spec.pan.lowerBound - 1e-9 && shot.panDegrees <= spec.pan.upperBound + 1e-9, "pan \(shot.panDegrees)")
                #expect(shot.tiltDegrees >= spec.tilt.lowerBound - 1e-9 && shot.tiltDegrees <= spec.tilt.upperBound + 1e-9)
                if rowsVisited.last != shot.row {
                    rowsVisited.append(shot.row)
                } else {
                    #expect(abs(shot.column - plan.shots[k - 1].column) == 1)
                }
            }
            #expect(rowsVisited == Array(0..<plan.rows) || rowsVisited == Array((0..<plan.rows).reversed()))
            for r in 0..<plan.rows { #expect(seen.contains([r, plan.shotsPerRow[r] - 1])) }
        }
    }
}
