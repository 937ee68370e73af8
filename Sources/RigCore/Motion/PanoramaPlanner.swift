import FoundationEssentials
import Glibc
import RigFormat

/// The lens's field of view, from focal length and sensor size or given directly.
public struct FieldOfView: Sendable, Equatable {
    public var horizontalDegrees: Double
    public var verticalDegrees: Double

    public init(horizontalDegrees: Double, verticalDegrees: Double) {
        self.horizontalDegrees = horizontalDegrees
        self.verticalDegrees = verticalDegrees
    }

    /// Rectilinear lens: fov = 2·atan(sensor / 2f).
    public init(focalLengthMillimetres f: Double, sensorWidthMillimetres w: Double, sensorHeightMillimetres h: Double) {
        horizontalDegrees = 2 * atan(w / (2 * f)) * 180 / .pi
        verticalDegrees = 2 * atan(h / (2 * f)) * 180 / .pi
    }
}

/// What a panorama program asks for.
public struct PanoramaSpec: Sendable, Equatable {
    public var fieldOfView: FieldOfView
    /// Wanted overlap between neighbouring shots, 0…1.
    public var overlap: Double
    /// Shot centres: the first and last pan and tilt positions, in degrees.
    public var pan: ClosedRange<Double>
    public var tilt: ClosedRange<Double>
    public var panAxis: Int
    public var tiltAxis: Int
    /// The camera and lens as the program gave them, for stitcher files (`fieldOfView` is
    /// the mounted view the plan uses; this keeps the stored image's view and orientation).
    public var lens: CameraLens?
    /// Rows of shots over `tilt` and shots per row over `pan`, when the program gives them
    /// (`rows`/`columns`): spaced evenly, whatever overlap results. nil: as many as
    /// `overlap` asks for.
    public var rows: Int?
    public var columns: Int?
    /// One extra shot looking straight up (down), at this tilt: 90° (−90°) or the tilt
    /// axis's soft limit when that still sees the pole. nil: none.
    public var zenithTilt: Double?
    public var nadirTilt: Double?

    public init(
        fieldOfView: FieldOfView, overlap: Double, pan: ClosedRange<Double>, tilt: ClosedRange<Double>, panAxis: Int, tiltAxis: Int,
        lens: CameraLens? = nil, rows: Int? = nil, columns: Int? = nil, zenithTilt: Double? = nil, nadirTilt: Double? = nil
    ) {
        self.fieldOfView = fieldOfView
        self.overlap = overlap
        self.pan = pan
        self.tilt = tilt
        self.panAxis = panAxis
        self.tiltAxis = tiltAxis
        self.lens = lens
        self.rows = rows
        self.columns = columns
        self.zenithTilt = zenithTilt
        self.nadirTilt = nadirTilt
    }

    /// How far from the pole a shot straight up (or down) sees all round: half the
    /// narrower side of its view.
    public var poleReachDegrees: Double { min(fieldOfView.horizontalDegrees, fieldOfView.verticalDegrees) / 2 }

    /// The cap round the pole a pole shot at `tilt` (its magnitude) sees all round, in
    /// degrees from the pole: `poleReachDegrees` less how far the shot leans off the pole.
    public func poleCapDegrees(atTilt tilt: Double) -> Double { poleReachDegrees - (90 - abs(tilt)) }
}

/// One shot of a panorama.
public struct PanoramaShot: Sendable, Equatable {
    public var row: Int
    public var column: Int
    public var panDegrees: Double
    public var tiltDegrees: Double
}

/// A planned panorama: shots in shooting order and the overlap they really get.
public struct PanoramaPlan: Sendable, Equatable {
    public var shots: [PanoramaShot]
    public var rows: Int
    /// Shots per row, top of the tilt range first as planned (row index order).
    public var shotsPerRow: [Int]
    /// The smallest real overlap between horizontal neighbours over all rows, 0…1.
    public var horizontalOverlap: Double
    /// The real overlap between rows, 0…1 (1 when there is one row), the zenith and nadir
    /// shots' with their neighbouring row included.
    public var verticalOverlap: Double
}

public enum PanoramaPlanner {
    /// Rows over the tilt range and the tilt between them. `rows` is a Double: a hostile
    /// spec (a 0.03° lens over 180°) can ask for more rows than is sane to build.
    static func rowGrid(_ spec: PanoramaSpec) -> (rows: Double, tiltStep: Double) {
        let vfov = spec.fieldOfView.verticalDegrees
        let tiltSpan = spec.tilt.upperBound - spec.tilt.lowerBound
        if let rows = spec.rows { return rows > 1 ? (Double(rows), tiltSpan / Double(rows - 1)) : (1, 0) }
        guard tiltSpan > 1e-9 else { return (1, 0) }
        let rows = (tiltSpan / (vfov * (1 - spec.overlap)) - 1e-9).rounded(.up) + 1
        return (rows, tiltSpan / (rows - 1))
    }

    /// Row `r`'s tilt: one row sits in the middle of the tilt range.
    static func rowTilt(_ spec: PanoramaSpec, row r: Int, grid: (rows: Double, tiltStep: Double)) -> Double {
        grid.rows <= 1 ? (spec.tilt.lowerBound + spec.tilt.upperBound) / 2 : spec.tilt.lowerBound + Double(r) * grid.tiltStep
    }

    /// One row's layout: how many shots, how far apart, and whether they go round.
    struct RowLayout {
        enum Kind { case pole, single, fullCircle, span }
        var kind: Kind
        /// Shots in the row (a Double for the same reason as `rowGrid`).
        var count: Double
        /// Degrees between neighbouring shots.
        var spacing: Double
        /// Widening of the pan step away from the horizon.
        var widen: Double
    }

    static func rowLayout(_ spec: PanoramaSpec, tilt: Double) -> RowLayout {
        let hfov = spec.fieldOfView.horizontalDegrees
        let vfov = spec.fieldOfView.verticalDegrees
        let edge = abs(tilt) - vfov / 2
        // The row is at the pole: one shot, at any pan, sees the whole cap.
        if abs(tilt) >= 90 - 1e-9 || edge >= 89 { return RowLayout(kind: .pole, count: 1, spacing: 0, widen: 1) }
        let widen = 1 / cos(max(0, edge) * .pi / 180)
        let step = min(hfov * (1 - spec.overlap) * widen, 360)
        let panSpan = spec.pan.upperBound - spec.pan.lowerBound
        if panSpan <= 1e-9 || spec.columns == 1 { return RowLayout(kind: .single, count: 1, spacing: 0, widen: widen) }
        if let columns = spec.columns {
            // Given columns: evenly over the range, or round a full turn without shooting
            // the same place twice.
            if panSpan >= 360 - 1e-9 { return RowLayout(kind: .fullCircle, count: Double(columns), spacing: 360 / Double(columns), widen: widen) }
            return RowLayout(kind: .span, count: Double(columns), spacing: panSpan / Double(columns - 1), widen: widen)
        }
        // When the way round from the last shot back to the first is no longer than a
        // full circle's spacing, the ends already overlap as wanted: plan the row as a full
        // circle (every shot still inside the range), or a [0, 359.999] pan would shoot
        // the same place twice (at 0° and at ~360°).
        let circleCount = max(1, (360 / step - 1e-9).rounded(.up))
        if 360 - panSpan <= 360 / circleCount + 1e-9 {
            return RowLayout(kind: .fullCircle, count: circleCount, spacing: 360 / circleCount, widen: widen)
        }
        let count = (panSpan / step - 1e-9).rounded(.up) + 1
        return RowLayout(kind: .span, count: count, spacing: panSpan / (count - 1), widen: widen)
    }

    /// How many shots `plan` takes for `spec`, counted without building them; more than
    /// `Bounds.maxShots` means the spec is refused (the count may then be a lower bound).
    public static func shotCount(_ spec: PanoramaSpec) -> Double {
        let grid = rowGrid(spec)
        guard grid.rows <= Double(Bounds.maxShots) else { return grid.rows.isNaN ? .infinity : grid.rows }
        var total = (spec.zenithTilt == nil ? 0.0 : 1) + (spec.nadirTilt == nil ? 0 : 1)
        for r in 0..<Int(grid.rows) {
            total += rowLayout(spec, tilt: rowTilt(spec, row: r, grid: grid)).count
            if total > Double(Bounds.maxShots) { break }
        }
        return total
    }

    /// The overlaps a spec's plan gets, worked out row by row without building the shots:
    /// the smallest between horizontal neighbours (1 when no row has two shots) and between
    /// rows, the zenith and nadir shots' with their row included (1 with one row).
    public static func overlaps(_ spec: PanoramaSpec) -> (horizontal: Double, vertical: Double) {
        let grid = rowGrid(spec)
        let rows = grid.rows >= 1 ? Int(min(grid.rows, Double(Bounds.maxShots))) : 1
        var horizontal = 1.0
        for r in 0..<rows {
            let row = rowLayout(spec, tilt: rowTilt(spec, row: r, grid: grid))
            guard row.count > 1, row.kind == .span || row.kind == .fullCircle else { continue }
            horizontal = min(horizontal, 1 - row.spacing / (spec.fieldOfView.horizontalDegrees * row.widen))
        }
        return (horizontal, verticalOverlap(spec, grid: grid, rows: rows))
    }

    /// The smallest overlap between neighbouring rows and between a pole shot and the row
    /// next to it, as a fraction of the vertical field of view.
    static func verticalOverlap(_ spec: PanoramaSpec, grid: (rows: Double, tiltStep: Double), rows: Int) -> Double {
        let vfov = spec.fieldOfView.verticalDegrees
        var overlap = rows > 1 ? 1 - grid.tiltStep / vfov : 1
        // A pole shot sees a cap `poleCapDegrees` round the pole; the row next to it reaches
        // half a view above (below) its centre.
        if let zenith = spec.zenithTilt {
            let top = rowTilt(spec, row: rows - 1, grid: grid)
            overlap = min(overlap, (top + vfov / 2 - (90 - spec.poleCapDegrees(atTilt: zenith))) / vfov)
        }
        if let nadir = spec.nadirTilt {
            let bottom = rowTilt(spec, row: 0, grid: grid)
            overlap = min(overlap, (-90 + spec.poleCapDegrees(atTilt: nadir) - (bottom - vfov / 2)) / vfov)
        }
        return overlap
    }

    /// Plans a grid: rows evenly spaced over the tilt range, each row's pan step widened
    /// by 1/cos of its edge nearest the horizon (fewer shots far from it), serpentine
    /// order starting at the corner nearest `currentPan`/`currentTilt`. Given `rows` and
    /// `columns` space that many evenly instead; a zenith (nadir) shot is one more row
    /// above (below) the others, a single shot at the pan the rig is at.
    ///
    /// A spec with more than `Bounds.maxShots` shots (see `shotCount`) is cut short at
    /// that many rows and shots per row; the parser refuses such specs first.
    public static func plan(_ spec: PanoramaSpec, currentPan: Double, currentTilt: Double) -> PanoramaPlan {
        let grid = rowGrid(spec)
        let limit = Double(Bounds.maxShots)
        // Clamped in Double (NaN reads as 1) before converting: never a trap.
        let gridRows = grid.rows >= 1 ? Int(min(grid.rows, limit)) : 1
        let verticalOverlap = verticalOverlap(spec, grid: grid, rows: gridRows)

        var rowTilts: [Double] = []
        var rowPans: [[Double]] = []
        var poleRows: Set<Int> = []
        var worstOverlap = 1.0
        if let nadir = spec.nadirTilt {
            poleRows.insert(rowTilts.count)
            rowTilts.append(nadir)
            rowPans.append([spec.pan.lowerBound])
        }
        for r in 0..<gridRows {
            let tilt = rowTilt(spec, row: r, grid: grid)
            let row = rowLayout(spec, tilt: tilt)
            let count = row.count >= 1 ? Int(min(row.count, limit)) : 1
            let hfovWide = spec.fieldOfView.horizontalDegrees * row.widen
            let pans: [Double]
            switch row.kind {
            case .pole:
                pans = [spec.pan.lowerBound]
                poleRows.insert(rowTilts.count)
            case .single:
                pans = [(spec.pan.lowerBound + spec.pan.upperBound) / 2]
            case .fullCircle:
                pans = (0..<count).map { spec.pan.lowerBound + Double($0) * row.spacing }
                if count > 1 { worstOverlap = min(worstOverlap, 1 - row.spacing / hfovWide) }
            case .span:
                pans = (0..<count).map { spec.pan.lowerBound + Double($0) * row.spacing }
                worstOverlap = min(worstOverlap, 1 - row.spacing / hfovWide)
            }
            rowTilts.append(tilt)
            rowPans.append(pans)
        }
        if let zenith = spec.zenithTilt {
            poleRows.insert(rowTilts.count)
            rowTilts.append(zenith)
            rowPans.append([spec.pan.lowerBound])
        }
        let rows = rowTilts.count

        // Serpentine from the corner nearest the current pose: each row starts at its end
        // nearest the previous shot, and a pole shot keeps the pan where it is.
        let rowOrder: [Int] =
            abs(currentTilt - rowTilts[rows - 1]) < abs(currentTilt - rowTilts[0])
            ? Array((0..<rows).reversed()) : Array(0..<rows)
        var shots: [PanoramaShot] = []
        var pan = currentPan
        for r in rowOrder {
            if poleRows.contains(r) {
                rowPans[r] = [min(max(pan, spec.pan.lowerBound), spec.pan.upperBound)]
            }
            let pans = rowPans[r]
            let forward = abs(pan - pans[0]) <= abs(pan - pans[pans.count - 1])
            let columns = forward ? Array(pans.indices) : Array(pans.indices.reversed())
            for c in columns {
                shots.append(PanoramaShot(row: r, column: c, panDegrees: pans[c], tiltDegrees: rowTilts[r]))
            }
            pan = shots[shots.count - 1].panDegrees
        }
        return PanoramaPlan(
            shots: shots, rows: rows, shotsPerRow: rowPans.map(\.count),
            horizontalOverlap: worstOverlap, verticalOverlap: verticalOverlap)
    }
}
