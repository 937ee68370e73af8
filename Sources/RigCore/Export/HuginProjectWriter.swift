import Foundation

/// Writes a Hugin project (`.pto`, PanoTools script): a `p` line for an equirectangular
/// panorama that covers the shots, and one `i` line per image with its size, the lens's
/// field of view and the yaw, pitch and roll the rig shot it at (REFERENCE §8).
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
        // centre offset), wide and high enough for the farthest shot's edge, at about the
        // images' own resolution at their centre.
        let widestYaw = project.shots.map { abs($0.yawDegrees) }.max() ?? 0
        let highestPitch = project.shots.map { abs($0.pitchDegrees) }.max() ?? 0
        let panoramaHfov = min(360, 2 * widestYaw + mounted.horizontalDegrees)
        let panoramaVfov = min(180, 2 * highestPitch + mounted.verticalDegrees)
        let pixelsPerDegree = Double(size.width) / lens.sensorFieldOfView.horizontalDegrees
        let width = pixels(panoramaHfov * pixelsPerDegree)
        let height = pixels(panoramaVfov * pixelsPerDegree)
        let stacks = project.bracketCount > 1

        var lines = [
            "# hugin project file",
            "# written by rig from \(project.source.replacingOccurrences(of: "\n", with: " ")): \(project.shots.count) image\(project.shots.count == 1 ? "" : "s") at the positions \(project.fromLog ? "shot" : "planned")",
            "p f2 w\(width) h\(height) v\(decimal(panoramaHfov)) n\"TIFF_m\"",
            "m i0",
            "",
        ]
        var stackOfStep: [Int: Int] = [:]
        for (index, shot) in project.shots.enumerated() {
            var line = "i w\(size.width) h\(size.height) f0 "
            line += index == 0 ? "v\(decimal(lens.sensorFieldOfView.horizontalDegrees))" : "v=0"
            line += " r\(decimal(lens.rollDegrees)) p\(decimal(shot.pitchDegrees)) y\(decimal(shot.yawDegrees))"
            if stacks {
                let stack = stackOfStep[shot.step] ?? stackOfStep.count
                stackOfStep[shot.step] = stack
                line += " j\(stack)"
            }
            line += " n\"\(shot.imageName)\""
            lines.append(line)
        }
        return lines.joined(separator: "\n") + "\n"
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
        var text = String(format: "%.6f", value)
        while text.hasSuffix("0") { text.removeLast() }
        if text.hasSuffix(".") { text.removeLast() }
        return text == "-0" ? "0" : text
    }
}
