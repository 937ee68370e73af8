import FoundationEssentials
import Glibc
import RigCore
import RigFormat
import SystemPackage

/// Why a rig file was not changed. The file is as it was.
public enum RigFileEditError: Error, Sendable, CustomStringConvertible {
    /// The file could not be read, is not a rig file, or the change would make it one
    /// `rig check` refuses (`FILE:LINE:COLUMN: error: …` of the changed text).
    case file(FileError)
    /// The file has no such axis.
    case noAxis(file: String, axis: String)
    /// The change could not be placed in the file's text.
    case edit(file: String, JSONSourceEdit.Problem)
    case write(AtomicFile.WriteError)

    public var description: String {
        switch self {
        case .file(let e): e.description
        case .noAxis(let file, let axis): "\(file): no axis named \"\(elided(axis))\""
        case .edit(let file, let p): "\(file): \(p)"
        case .write(let e): e.description
        }
    }
}

/// The one way rig changes a rig file a person wrote (`rig calibrate servo`, `rig calibrate
/// resonance`): one axis's key set, every other byte of the file as it was (layout, order,
/// numbers as written), the result checked as `rig check` checks a rig before it replaces
/// the file (atomically, through `AtomicFile`, keeping the file's mode; through a symbolic
/// link, the file it points to).
public enum RigFileEditor {
    /// Writes `calibration` as axis `axis`'s multi-point `"calibration"`: in place of an
    /// existing one, or of `"pulseUs"`/`"angleDeg"`, or after `"channel"`. An axis with
    /// `"inverted": true` gets the table mirrored, so that it reads back as `calibration`.
    /// Returns the rig as the new file describes it.
    @discardableResult
    public static func setCalibration(_ calibration: Calibration, axis: String, in path: String) throws(RigFileEditError) -> Rig {
        try edit(path, axis: axis) { object, members, edit throws(JSONSourceEdit.Problem) in
            let inverted = members.first { $0.key == "inverted" }?.value.value == .bool(true)
            var pulses = calibration.pulses
            if inverted, let low = pulses.min(), let high = pulses.max() { pulses = pulses.map { low + high - $0 } }
            let table = "[" + zip(calibration.angles, pulses).map { "[\(JSONText.number($0)), \(JSONText.number($1))]" }.joined(separator: ", ") + "]"
            try setMember("calibration", to: table, replacing: ["pulseUs", "angleDeg"], after: "channel", object: object, members: members, edit: &edit)
        }
    }

    /// Writes `shaper` as axis `axis`'s `"shaper"`: in place of an existing one, else after
    /// `"payload"`, `"maxAcceleration"` or the last member. Returns the rig as the new
    /// file describes it.
    @discardableResult
    public static func setShaper(_ shaper: ShaperConfig, axis: String, in path: String) throws(RigFileEditError) -> Rig {
        try edit(path, axis: axis) { object, members, edit throws(JSONSourceEdit.Problem) in
            let text =
                "{\"type\": \(JSONText.string(shaper.kind.rawValue)), \"frequencyHz\": \(JSONText.number(shaper.frequencyHz)), \"damping\": \(JSONText.number(shaper.damping))}"
            let after = ["payload", "maxJerk", "maxAcceleration"].first { key in members.contains { $0.key == key } } ?? ""
            try setMember("shaper", to: text, replacing: [], after: after, object: object, members: members, edit: &edit)
        }
    }

    /// Sets `key` of the axis object to `valueText`: its value replaced if it is there,
    /// else in place of the first of `replacing` that is (the others removed), else added
    /// after the member `after` (or the last one).
    static func setMember(
        _ key: String, to valueText: String, replacing: [String], after: String, object: JSONNode, members: [JSONMember], edit: inout JSONSourceEdit
    ) throws(JSONSourceEdit.Problem) {
        if let existing = members.first(where: { $0.key == key }) {
            try edit.replace(existing.value, with: valueText)
            for old in members where replacing.contains(old.key) { try edit.remove(old, of: object) }
            return
        }
        let old = members.filter { replacing.contains($0.key) }
        if let first = old.first {
            try edit.replace(first, with: JSONText.string(key) + ": " + valueText)
            for other in old.dropFirst() { try edit.remove(other, of: object) }
            return
        }
        guard let anchor = members.first(where: { $0.key == after }) ?? members.last else {
            throw JSONSourceEdit.Problem(description: "the axis object is empty")
        }
        try edit.insert(key: key, valueText: valueText, after: anchor)
    }

    /// Reads the file, finds the axis, lets `change` edit it, checks and saves the result.
    static func edit(
        _ path: String, axis: String,
        _ change: (JSONNode, [JSONMember], inout JSONSourceEdit) throws(JSONSourceEdit.Problem) -> Void
    ) throws(RigFileEditError) -> Rig {
        // Through a symbolic link, the file it points to (a rename would replace the link).
        let target =
            realpath(path, nil).map { p in
                defer { free(p) }
                return String(cString: p)
            } ?? path
        let bytes: [UInt8]
        let root: JSONNode
        do { bytes = try RigFileReader.readBytes(target) } catch { throw .file(error) }
        var parser = JSONParser(bytes: bytes)
        do { root = try parser.parseDocument() } catch { throw .file(error.fileError(file: path)) }
        guard case .object(let top) = root.value, let axesMember = top.first(where: { $0.key == "axes" }), case .array(let axes) = axesMember.value.value,
            let axisNode = axes.first(where: { node in
                if case .object(let m) = node.value, case .string(let name)? = m.first(where: { $0.key == "name" })?.value.value { return name.text == axis }
                return false
            }), case .object(let members) = axisNode.value
        else { throw .noAxis(file: path, axis: axis) }
        var edit = JSONSourceEdit(bytes: bytes)
        let changed: [UInt8]
        do {
            try change(axisNode, members, &edit)
            changed = try edit.applied()
        } catch {
            throw .edit(file: path, error)
        }
        let rig: Rig
        do { rig = try RigParser.parse(text: String(decoding: changed, as: UTF8.self), file: path) } catch { throw .file(error) }
        var info = stat()
        let mode = stat(target, &info) == 0 ? FilePermissions(rawValue: CModeT(info.st_mode & 0o7777)) : [.ownerReadWrite, .groupRead, .otherRead]
        do { try AtomicFile.write(changed, to: target, permissions: mode) } catch { throw .write(error) }
        return rig
    }
}
