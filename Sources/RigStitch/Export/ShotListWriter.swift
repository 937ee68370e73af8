import FoundationEssentials
import Glibc
import RigCore
import RigFormat

/// Writes the shots as CSV or JSON, for spreadsheets and scripts.
///
/// A plan's CSV is `rig plan --csv` as it always was: `index,label,<axis>…` with two
/// decimals. An export adds what the log knows: the step, bracket, shutter times on the
/// run's clock and the image name, with positions as sent (shortest exact form), and the
/// image's size in pixels (the file's own, when the run measured it), exposure value
/// (`ev`, as Hugin's `Eev`) and true time (`time`, UTC to the millisecond), each empty
/// when the log does not know it.
public enum ShotListWriter {
    public static func csv(_ project: StitchProject) -> String {
        var header = ["index"]
        if project.fromLog { header += ["step", "bracket"] }
        header.append("label")
        header += project.axisNames.map(field)
        if project.fromLog { header += ["startSeconds", "endSeconds", "image", "width", "height", "ev", "time"] }
        var lines = [header.joined(separator: ",")]
        for (index, shot) in project.shots.enumerated() {
            var row = [String(index + 1)]
            if project.fromLog { row += [String(shot.step), String(shot.bracket)] }
            row.append(quoted(printable(shot.label)))
            row += shot.pose.map { project.fromLog ? ($0.isFinite ? format($0) : "") : fixed($0, 2) }
            if project.fromLog {
                row += [shot.startSeconds.map(format) ?? "", shot.endSeconds.map(format) ?? "", field(shot.imageName)]
                row += [
                    shot.imageSize.map { String($0.width) } ?? "", shot.imageSize.map { String($0.height) } ?? "",
                    shot.exposureValue.map { format(rounded4($0)) } ?? "",
                    shot.time.map { UTCTime.iso($0.timeIntervalSince1970) } ?? "",
                ]
            }
            lines.append(row.joined(separator: ","))
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// `{"source":…,"axes":[…],"shots":[{"index":1,"step":1,"label":…,"pose":{…},"image":…,"yaw":…,"pitch":…}, …]}`,
    /// one shot per line; a log's shots also carry `bracket`, `startSeconds`, `endSeconds`,
    /// `redo`, `width`, `height`, `ev` and `time` when known, a panorama's project its grid.
    public static func json(_ project: StitchProject) -> String {
        var out = "{\"source\":\(JSONText.string(project.source)),\"axes\":[\(project.axisNames.map(JSONText.string).joined(separator: ","))]"
        if let m = project.mosaic {
            out +=
                ",\"panorama\":{\"rows\":\(m.rows),\"columns\":\(m.columns),\"horizontalOverlap\":\(JSONText.number(m.horizontalOverlap)),\"verticalOverlap\":\(JSONText.number(m.verticalOverlap))}"
        }
        out += ",\"shots\":["
        for (index, shot) in project.shots.enumerated() {
            out += index == 0 ? "\n" : ",\n"
            out += "{\"index\":\(index + 1),\"step\":\(shot.step),\"label\":\(JSONText.string(shot.label)),\"pose\":{"
            out += zip(project.axisNames, shot.pose).map { "\(JSONText.string($0)):\(JSONText.number($1))" }.joined(separator: ",")
            out += "},\"image\":\(JSONText.string(shot.imageName))"
            if project.panAxisName != nil { out += ",\"yaw\":\(JSONText.number(shot.yawDegrees)),\"pitch\":\(JSONText.number(shot.pitchDegrees))" }
            if project.fromLog {
                out += ",\"bracket\":\(shot.bracket)"
                if let s = shot.startSeconds { out += ",\"startSeconds\":\(JSONText.number(s))" }
                if let e = shot.endSeconds { out += ",\"endSeconds\":\(JSONText.number(e))" }
                if shot.redo { out += ",\"redo\":true" }
                if let size = shot.imageSize { out += ",\"width\":\(size.width),\"height\":\(size.height)" }
                if let ev = shot.exposureValue { out += ",\"ev\":\(JSONText.number(rounded4(ev)))" }
                if let time = shot.time { out += ",\"time\":\(JSONText.string(UTCTime.iso(time.timeIntervalSince1970)))" }
            }
            out += "}"
        }
        return out + "\n]}\n"
    }

    static func rounded4(_ value: Double) -> Double { (value * 10_000).rounded() / 10_000 }

    /// A CSV field, quoted when it has a comma, quote or line break.
    static func field(_ text: String) -> String {
        text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) ? quoted(text) : text
    }

    /// Always quoted (labels were, in `rig plan --csv`); quotes inside are doubled.
    static func quoted(_ text: String) -> String {
        "\"" + text.replacing("\"", with: "\"\"") + "\""
    }
}
