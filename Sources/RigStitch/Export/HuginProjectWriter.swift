import FoundationEssentials
import Glibc
import RigCore
import RigFormat

/// Writes a Hugin project (`.pto`, PanoTools script): a `p` line for an equirectangular
/// panorama that covers the shots, and one `i` line per image with its size (the file's
/// own, when a shot log measured it: `nona` refuses an image whose size differs), the
/// lens's field of view, the yaw, pitch and roll the rig shot it at (REFERENCE §8) and,
/// when the log knows it, its exposure value (`Eev`, so Hugin fuses a bracket's frames
/// by their real exposures).
///
/// All images share one lens: the first `i` line carries `v`, the others link to it
/// (`v=0`), as Hugin writes linked lenses, so its optimiser fits one field of view. The
/// project has no control points: Hugin's tools (`cpfind`) add them; the positions are
/// the starting point that makes matching fast and keeps featureless sky in place.
public enum HuginProjectWriter {
    public static func text(_ project: StitchProject, lens: CameraLens) -> String {
        let size = project.imageSize
        let mounted = lens.mountedFieldOfView
        // The panorama is centred on yaw 0, pitch 0 (Hugin's equirectangular output has no
        // centre offset), wide and high enough for every shot's outline (a pitched image's
        // corners reach further in yaw than its centre plus half its width), at about the
        // images' own resolution at their centre.
        let extent = coverage(of: project.shots, mounted: mounted)
        let panoramaHfov = min(360, 2 * extent.yaw)
        let panoramaVfov = min(180, 2 * extent.pitch)
        let pixelsPerDegree = Double(size.width) / lens.sensorFieldOfView.horizontalDegrees
        let width = pixels(panoramaHfov * pixelsPerDegree)
        let height = pixels(panoramaVfov * pixelsPerDegree)
        let stacks = project.bracketCount > 1

        var lines = [
            "# hugin project file",
            "# written by rig from \(project.source.replacing("\n", with: " ")): \(project.shots.count) image\(project.shots.count == 1 ? "" : "s") at the positions \(project.fromLog ? "shot" : "planned")",
            "p f2 w\(width) h\(height) v\(decimal(panoramaHfov)) n\"TIFF_m\"",
            "m i0",
            "",
        ]
        var firstImageOfStep: [Int: Int] = [:]
        for (index, shot) in project.shots.enumerated() {
            let own = shot.imageSize ?? size
            var line = "i w\(own.width) h\(own.height) f0 "
            line += index == 0 ? "v\(decimal(lens.sensorFieldOfView.horizontalDegrees))" : "v=0"
            line += " r\(decimal(lens.rollDegrees)) p\(decimal(shot.pitchDegrees)) y\(decimal(shot.yawDegrees))"
            if let ev = shot.exposureValue { line += " Eev\(decimal(ev))" }
            if stacks {
                // A stack's first image numbers it (`j2`); the others link to that image
                // (`j=6`), as Hugin's own pto_gen writes, so Hugin sees one stack per step.
                if let first = firstImageOfStep[shot.step] {
                    line += " j=\(first)"
                } else {
                    firstImageOfStep[shot.step] = index
                    line += " j\(firstImageOfStep.count - 1)"
                }
            }
            line += " n\"\(shot.imageName)\""
            lines.append(line)
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// How far the shots' outlines reach from yaw 0 and pitch 0, in degrees (at most 180
    /// and 90): each image's edge, sampled, turned by its pitch and then its yaw. An image
    /// over a pole covers every yaw.
    static func coverage(of shots: [StitchShot], mounted: FieldOfView) -> (yaw: Double, pitch: Double) {
        let radians = Double.pi / 180
        let halfWidth = tan(mounted.horizontalDegrees / 2 * radians)
        let halfHeight = tan(mounted.verticalDegrees / 2 * radians)
        let samples = 16
        var edge: [(u: Double, v: Double)] = []
        for k in 0...samples {
            let t = -1 + 2 * Double(k) / Double(samples)
            edge += [(t * halfWidth, halfHeight), (t * halfWidth, -halfHeight), (halfWidth, t * halfHeight), (-halfWidth, t * halfHeight)]
        }
        var yaw = 0.0
        var pitch = 0.0
        for shot in shots {
            let p = shot.pitchDegrees * radians
            if abs(shot.pitchDegrees) + mounted.verticalDegrees / 2 >= 90 { return (180, 90) }
            for point in edge {
                // Camera frame: x forward, y right, z up; pitch turns x toward z.
                let x = cos(p) - point.v * sin(p)
                let z = sin(p) + point.v * cos(p)
                let length = (x * x + point.u * point.u + z * z).squareRoot()
                // Past ±180° the panorama is a full turn (min below), not a wrapped angle.
                yaw = max(yaw, min(180, abs(shot.yawDegrees + atan2(point.u, x) / radians)))
                pitch = max(pitch, abs(asin(z / length) / radians))
            }
        }
        return (yaw, pitch)
    }

    /// A pixel count, 1…1e9 (NaN and infinities, from a nonsense lens, become 1).
    static func pixels(_ value: Double) -> Int {
        let rounded = value.rounded()
        guard rounded.isFinite, rounded >= 1 else { return 1 }
        return rounded > 1e9 ? 1_000_000_000 : Int(rounded)
    }

    /// At most 6 decimals (a millionth of a degree), no trailing zeros, no `-0`.
    static func decimal(_ value: Double) -> String {
        guard value.isFinite else { return "0" }
        var text = fixed(value, 6)
        while text.hasSuffix("0") { text.removeLast() }
        if text.hasSuffix(".") { text.removeLast() }
        return text == "-0" ? "0" : text
    }
}
