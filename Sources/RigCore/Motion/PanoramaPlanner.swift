import Foundation

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

    public init(fieldOfView: FieldOfView, overlap: Double, pan: ClosedRange<Double>, tilt: ClosedRange<Double>, panAxis: Int, tiltAxis: Int,
                lens: CameraLens? = nil) {
        self.fieldOfView = fieldOfView
        self.overlap = overlap
        self.pan = pan
        self.tilt = tilt
        self.panAxis = panAxis
        self.tiltAxis = tiltAxis
        self.lens = lens
    }
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
    /// The real overlap between rows, 0…1 (1 when there is one row).
    public var verticalOverlap: Double
}

public enum PanoramaPlanner {
    /// Plans a grid: rows evenly spaced over the tilt range, each row's pan step widened
    /// by 1/cos of its edge nearest the horizon (fewer shots far from it), serpentine
    /// order starting at the corner nearest `currentPan`/`currentTilt`.
    public static func plan(_ spec: PanoramaSpec, currentPan: Double, currentTilt: Double) -> PanoramaPlan {
        let hfov = spec.fieldOfView.horizontalDegrees
        let vfov = spec.fieldOfView.verticalDegrees
        let keep = 1 - spec.overlap

        let tiltSpan = spec.tilt.upperBound - spec.tilt.lowerBound
        let rows = tiltSpan <= 1e-9 ? 1 : Int((tiltSpan / (vfov * keep) - 1e-9).rounded(.up)) + 1
        let tiltStep = rows > 1 ? tiltSpan / Double(rows - 1) : 0
        let verticalOverlap = rows > 1 ? 1 - tiltStep / vfov : 1

        var rowTilts: [Double] = []
        var rowPans: [[Double]] = []
        var poleRows: Set<Int> = []
        var worstOverlap = 1.0
        for r in 0..<rows {
            let tilt = spec.tilt.lowerBound + Double(r) * tiltStep
            rowTilts.append(tilt)
            let edge = abs(tilt) - vfov / 2
            let pans: [Double]
            if abs(tilt) >= 90 - 1e-9 || edge >= 89 {
                // The row is at the pole: one shot, at any pan, sees the whole cap.
                pans = [spec.pan.lowerBound]
                poleRows.insert(r)
            } else {
                let widen = 1 / cos(max(0, edge) * .pi / 180)
                let step = min(hfov * keep * widen, 360)
                let panSpan = spec.pan.upperBound - spec.pan.lowerBound
                if panSpan >= 360 - 1e-9 {
                    let count = max(1, Int((360 / step - 1e-9).rounded(.up)))
                    pans = (0..<count).map { spec.pan.lowerBound + Double($0) * 360 / Double(count) }
                    if count > 1 { worstOverlap = min(worstOverlap, 1 - (360 / Double(count)) / (hfov * widen)) }
                } else if panSpan <= 1e-9 {
                    pans = [spec.pan.lowerBound]
                } else {
                    let count = Int((panSpan / step - 1e-9).rounded(.up)) + 1
                    let actual = panSpan / Double(count - 1)
                    pans = (0..<count).map { spec.pan.lowerBound + Double($0) * actual }
                    worstOverlap = min(worstOverlap, 1 - actual / (hfov * widen))
                }
            }
            rowPans.append(pans)
        }

        // Serpentine from the corner nearest the current pose: each row starts at its end
        // nearest the previous shot, and a pole shot keeps the pan where it is.
        let rowOrder: [Int] = abs(currentTilt - rowTilts[rows - 1]) < abs(currentTilt - rowTilts[0])
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
        return PanoramaPlan(shots: shots, rows: rows, shotsPerRow: rowPans.map(\.count),
                            horizontalOverlap: worstOverlap, verticalOverlap: verticalOverlap)
    }
}
