import FoundationEssentials
import Glibc
import RigCore
import RigFormat
import SystemPackage

/// Writes Papywizard's XML, format version "c" (REFERENCE §8), which Hugin's and
/// Autopano's Papywizard importers read: the lens (focal length, crop factor), the shooting
/// mode (`mosaic` for a planned panorama grid, `preset` otherwise) and one `<pict>` per
/// image, ids from 1 in shooting order, angles with one decimal.
///
/// Hugin's importer takes the focal length and crop factor from the header, each image's
/// yaw, pitch and roll from its `<position>`, and starts a new stack at every `bracket="1"`.
/// Times are written only when they are known (a shot log whose run recorded its start).
public enum PapywizardWriter {
    public static func text(_ project: StitchProject, lens: CameraLens) -> String {
        let (focal, crop) = lens.focalAndCropFactor(imageSize: project.imageSize)
        let title = FilePath(project.source).lastComponent?.string ?? ""
        var x: [String] = [
            "<?xml version=\"1.0\" encoding=\"utf-8\"?>",
            "<papywizard version=\"c\">",
            "  <header>",
            "    <general>",
            "      <title>\(XMLText.escape(title))</title>",
            "      <gps/>",
            "      <comment>\(XMLText.escape("rig \(project.fromLog ? "export of the shot log" : "plan of") \(project.source)"))</comment>",
            "    </general>",
            "    <shooting mode=\"\(project.mosaic == nil ? "preset" : "mosaic")\">",
            "      <headOrientation>up</headOrientation>",
            "      <cameraOrientation>\(lens.orientation.rawValue)</cameraOrientation>",
        ]
        if let settle = project.settleSeconds { x.append("      <stabilizationDelay>\(fixed(settle, 1))</stabilizationDelay>") }
        x.append("      <counter>1</counter>")
        if let start = project.startTime { x.append("      <startTime>\(timestamp(start))</startTime>") }
        if let end = project.endTime { x.append("      <endTime>\(timestamp(end))</endTime>") }
        x += ["    </shooting>", "    <camera>"]
        if let exposure = project.exposureSeconds { x.append("      <timeValue>\(format(exposure))</timeValue>") }
        x += [
            "      <bracketing nbPicts=\"\(project.bracketCount)\"/>",
            "      <sensor coef=\"\(fixed(crop, 2))\" ratio=\"\(ratio(project.imageSize))\"/>",
            "    </camera>",
            "    <lens type=\"rectilinear\">",
            "      <focal>\(fixed(focal, 1))</focal>",
            "    </lens>",
        ]
        if let mosaic = project.mosaic {
            x += [
                "    <mosaic>",
                "      <nbPicts yaw=\"\(mosaic.columns)\" pitch=\"\(mosaic.rows)\"/>",
                "      <overlap minimum=\"\(fixed(mosaic.wantedOverlap, 2))\" yaw=\"\(fixed(mosaic.horizontalOverlap, 2))\" pitch=\"\(fixed(mosaic.verticalOverlap, 2))\"/>",
                "    </mosaic>",
            ]
        } else {
            x.append("    <preset name=\"\(XMLText.escape(title))\"/>")
        }
        x += ["  </header>", "  <shoot>"]
        for (index, shot) in project.shots.enumerated() {
            x.append("    <pict id=\"\(index + 1)\" bracket=\"\(shot.bracket)\">")
            if let time = shot.time { x.append("      <time>\(timestamp(time))</time>") }
            x.append("      <position yaw=\"\(fixed(shot.yawDegrees, 1))\" pitch=\"\(fixed(shot.pitchDegrees, 1))\" roll=\"\(fixed(lens.rollDegrees, 1))\"/>")
            x.append("    </pict>")
        }
        x += ["  </shoot>", "</papywizard>"]
        return x.joined(separator: "\n") + "\n"
    }

    /// Papywizard's time stamps, `2026-11-23_10h00m00s`, in UTC.
    static func timestamp(_ date: Date) -> String {
        let f = UTCTime.fields(date.timeIntervalSince1970)
        return "\(f.date)_\(zeroPadded(f.hour, 2))h\(zeroPadded(f.minute, 2))m\(zeroPadded(f.second, 2))s"
    }

    /// The nearest of the aspect ratios Papywizard offers.
    static func ratio(_ size: PixelSize) -> String {
        let long = Double(max(size.width, size.height))
        let short = Double(max(1, min(size.width, size.height)))
        let choices: [(String, Double)] = [("3:2", 1.5), ("4:3", 4.0 / 3), ("5:4", 1.25), ("16:9", 16.0 / 9), ("1:1", 1)]
        return choices.min { abs($0.1 - long / short) < abs($1.1 - long / short) }?.0 ?? "3:2"
    }

}
