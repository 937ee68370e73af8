import FoundationEssentials
import Glibc
import RigCore
import RigFormat
import RigSky
import SystemPackage

/// Writes one XMP sidecar per frame (`IMG_0001.JPG` → `IMG_0001.xmp`, the name Lightroom
/// and LRTimelapse look for): the frame's exposure as the shot log recorded it, its true
/// time, and rig's own fields.
///
/// - `exif:ExposureTime` (a rational, `1/100`), `exif:FNumber` (`28/5`),
///   `exif:ISOSpeedRatings` and `exifEX:PhotographicSensitivity`, `exif:ExposureBiasValue`
///   (the camera's exposure compensation): each only when the log has it.
/// - `xmp:CreateDate`, `exif:DateTimeOriginal` and `photoshop:DateCreated`: when the rig
///   fired the camera, UTC, to the millisecond.
/// - In the `rig` namespace (``namespace``): `Step`, `Bracket`, `Label`, `Redo` (when
///   true), `StartSeconds`/`EndSeconds` (the run's clock), `ExposureValue` (Hugin's `Eev`,
///   as the CSV's `ev`) and `Pose`, an ordered list of `{Axis, Position}`.
public enum XMPSidecarWriter {
    /// The `rig` namespace's URI (an identifier: nothing is fetched from it).
    public static let namespace = "http://ns.rig.invalid/xmp/1.0/"

    /// The sidecar's file name for an image: its base name with `.xmp` for the extension.
    public static func sidecarName(forImage image: String) -> String {
        let base = FilePath(image).lastComponent?.string ?? ""
        return (FilePath(base).stem ?? base) + ".xmp"
    }

    /// The sidecar of `shot`; `axisNames` name its pose's values.
    public static func text(_ shot: StitchShot, axisNames: [String]) -> String {
        var attributes: [(String, String)] = []
        if let time = shot.time {
            let iso = UTCTime.iso(time.timeIntervalSince1970)
            attributes += [("xmp:CreateDate", iso), ("exif:DateTimeOriginal", iso), ("photoshop:DateCreated", iso)]
        }
        let settings = shot.settings
        if let text = ExposureValue.setting(.shutter, in: settings), let seconds = ShutterSpeed.seconds(text) {
            attributes.append(("exif:ExposureTime", exposureTime(seconds)))
        }
        if let text = ExposureValue.setting(.aperture, in: settings), let n = Aperture.number(text) {
            attributes.append(("exif:FNumber", rational(n, maxDenominator: 100)))
        }
        let iso = ExposureValue.setting(.iso, in: settings).flatMap { Double($0) }.flatMap { $0 > 0 && $0 < 1e7 ? Int($0.rounded()) : nil }
        if let iso { attributes.append(("exifEX:PhotographicSensitivity", String(iso))) }
        if let text = ExposureValue.setting(.ev, in: settings), let bias = compensation(text) {
            attributes.append(("exif:ExposureBiasValue", bias))
        }
        attributes += [("rig:Step", String(shot.step)), ("rig:Bracket", String(shot.bracket)), ("rig:Label", shot.label)]
        if shot.redo { attributes.append(("rig:Redo", "True")) }
        if let start = shot.startSeconds { attributes.append(("rig:StartSeconds", format(start))) }
        if let end = shot.endSeconds { attributes.append(("rig:EndSeconds", format(end))) }
        if let ev = shot.exposureValue { attributes.append(("rig:ExposureValue", format(ShotListWriter.rounded4(ev)))) }

        var x = [
            "<x:xmpmeta xmlns:x=\"adobe:ns:meta/\" x:xmptk=\"rig\">",
            " <rdf:RDF xmlns:rdf=\"http://www.w3.org/1999/02/22-rdf-syntax-ns#\">",
            "  <rdf:Description rdf:about=\"\"",
            "    xmlns:xmp=\"http://ns.adobe.com/xap/1.0/\"",
            "    xmlns:exif=\"http://ns.adobe.com/exif/1.0/\"",
            "    xmlns:exifEX=\"http://cipa.jp/exif/1.0/\"",
            "    xmlns:photoshop=\"http://ns.adobe.com/photoshop/1.0/\"",
            "    xmlns:rig=\"\(namespace)\"",
        ]
        x += attributes.map { "   \($0.0)=\"\(XMLText.escape($0.1))\"" }
        x[x.count - 1] += ">"
        if let iso {
            x += ["   <exif:ISOSpeedRatings>", "    <rdf:Seq>", "     <rdf:li>\(iso)</rdf:li>", "    </rdf:Seq>", "   </exif:ISOSpeedRatings>"]
        }
        let pose = zip(axisNames, shot.pose).filter { $0.1.isFinite }
        if !pose.isEmpty {
            x += ["   <rig:Pose>", "    <rdf:Seq>"]
            for (axis, position) in pose {
                x.append(
                    "     <rdf:li rdf:parseType=\"Resource\"><rig:Axis>\(XMLText.escape(axis))</rig:Axis><rig:Position>\(format(position))</rig:Position></rdf:li>"
                )
            }
            x += ["    </rdf:Seq>", "   </rig:Pose>"]
        }
        x += ["  </rdf:Description>", " </rdf:RDF>", "</x:xmpmeta>"]
        return x.joined(separator: "\n") + "\n"
    }

    /// A shutter time as EXIF writes it: `1/250` for a fraction of a second, `30/1`, `5/2`.
    static func exposureTime(_ seconds: Double) -> String {
        if seconds > 0, seconds < 1 {
            let reciprocal = 1 / seconds
            if reciprocal < 1e9, abs(reciprocal - reciprocal.rounded()) < 1e-6 * reciprocal { return "1/\(Int(reciprocal.rounded()))" }
        }
        return rational(seconds, maxDenominator: 100_000)
    }

    /// The camera's exposure compensation (`-0.333`, `+1`, `-1/3`, `0.7`) as a rational in
    /// the camera's own steps (thirds or halves), or nil when it is not a number.
    static func compensation(_ text: String) -> String? {
        let t = text.trimmed()
        var value: Double?
        if let slash = t.firstIndex(of: "/") {
            if let a = Double(t[..<slash]), let b = Double(t[t.index(after: slash)...]), b != 0 { value = a / b }
        } else {
            value = Double(t)
        }
        guard let value, value.isFinite, abs(value) <= 100 else { return nil }
        // Cameras print thirds as 0.3 or 0.333 and halves as 0.5: 1/6 covers both.
        let sixths = value * 6
        if abs(sixths - sixths.rounded()) < 0.25 { return rational(sixths.rounded() / 6, maxDenominator: 6) }
        return rational(value, maxDenominator: 1000)
    }

    /// The closest fraction `p/q` to `value` with `q ≤ maxDenominator` (continued
    /// fractions), in lowest terms.
    static func rational(_ value: Double, maxDenominator: Int) -> String {
        guard value.isFinite else { return "0/1" }
        let negative = value < 0
        var x = abs(value)
        var (p0, q0, p1, q1) = (0, 1, 1, 0)
        for _ in 0..<64 {
            let a = x.rounded(.down)
            guard a < 1e12 else { break }
            let ai = Int(a)
            let (p2, q2) = (ai * p1 + p0, ai * q1 + q0)
            if q2 > maxDenominator { break }
            (p0, q0, p1, q1) = (p1, q1, p2, q2)
            let rest = x - a
            if rest < 1e-12 || abs(Double(p1) / Double(q1) - abs(value)) < 1e-12 * max(1, abs(value)) { break }
            x = 1 / rest
        }
        if q1 == 0 { (p1, q1) = (Int(min(abs(value), 1e15).rounded()), 1) }
        return "\(negative && p1 != 0 ? "-" : "")\(p1)/\(q1)"
    }
}
