import RigFormat

/// `{"event":"shot", …}`: one exposure, written (and flushed) once the camera reports it done.
public struct ShotLogShot: Sendable, Equatable {
    /// The step, 1-based as `rig` prints it and `--from-step` takes it.
    public var step: Int
    /// The step's label from the program (`"step 3"` when the program gives none).
    public var label: String
    /// Axis names, in the rig's order; `pose[i]` is the position of `axisNames[i]`.
    public var axisNames: [String]
    /// The pose as sent to the output, in degrees (or the axis's unit).
    public var pose: [Double]
    /// When the shutter sequence began and ended (focus to release, after-shot wait
    /// excluded), in seconds on the run's trace clock.
    public var startSeconds: Double
    public var endSeconds: Double
    /// True when the step was shot again (keyboard `r`, or going back to it).
    public var redo: Bool
    /// The shot's place in a bracket, 1-based, when the program takes several shots per step.
    public var bracket: Int?
    /// True when the run stopped while this shot was under way: the camera was fired (so
    /// the card holds a frame, perhaps cut short) but the shot never finished. It counts
    /// for the camera's file numbering, not as the step's shot: `--resume` shoots the step
    /// again and `rig export` skips it.
    public var interrupted: Bool
    /// The file the camera reported for this frame (`/store_00010001/DCIM/100CANON/IMG_0042.CR3`),
    /// when it reports one (`gphoto2`).
    public var file: String?
    /// Where the frame was copied to (`"download"` in the camera section).
    public var downloaded: String?
    /// The camera settings the frame was taken with, as the camera names them.
    public var settings: [CameraSetting]
    /// The wall-clock time the rig fired the camera (or, without one, began to hold still
    /// at the step), UTC, ISO 8601 to the millisecond (`2026-11-23T20:31:57.412Z`): the
    /// frame's true time. Nil in logs written before it was recorded.
    public var at: String?
    /// The EV100 of the settings an exposure ramp chose for this frame (what the ramp was
    /// at): a resumed run's ramp goes on from it. Nil without a ramp.
    public var rampEV: Double?
    /// How long the step's measured settle took, from the end of the move to the head
    /// measured still (`settleMeasured` true), or to the timeout and fixed settle it fell
    /// back to (false). Nil with a fixed settle, and in logs written before it was recorded.
    public var settleSeconds: Double?
    public var settleMeasured: Bool?
    /// In a group's log (the leader's): the follower rig that took this frame; nil for the
    /// log's own rig. `rig export` and `--resume` read only the own rig's frames.
    public var rig: String?
    /// In a group: the frame's trigger edge as the rig that took it measured it, UTC
    /// nanoseconds on that rig's clock (what the skew between rigs is measured from).
    public var edgeNs: Int64?

    public init(
        step: Int, label: String, axisNames: [String], pose: [Double], startSeconds: Double, endSeconds: Double, redo: Bool = false, bracket: Int? = nil,
        interrupted: Bool = false, file: String? = nil, downloaded: String? = nil, settings: [CameraSetting] = [], at: String? = nil,
        rampEV: Double? = nil, settle: (seconds: Double, measured: Bool)? = nil, rig: String? = nil, edgeNs: Int64? = nil
    ) {
        settleSeconds = settle?.seconds
        settleMeasured = settle?.measured
        self.rig = rig
        self.edgeNs = edgeNs
        self.at = at
        self.rampEV = rampEV
        self.file = file
        self.downloaded = downloaded
        self.settings = settings
        self.step = step
        self.label = label
        self.axisNames = axisNames
        self.pose = pose
        self.startSeconds = startSeconds
        self.endSeconds = endSeconds
        self.redo = redo
        self.bracket = bracket
        self.interrupted = interrupted
    }

    /// The position of the axis called `name`, if the shot has it.
    public func value(of name: String) -> Double? {
        axisNames.firstIndex(of: name).map { pose[$0] }
    }

    /// The event as one line of JSON, without the line break.
    public func jsonLine() -> String {
        var out = "{\"event\":\"shot\""
        if let rig { out += ",\"rig\":\(JSONText.string(rig))" }
        out += ",\"step\":\(step),\"label\":\(JSONText.string(label)),\"pose\":{"
        for (i, name) in axisNames.enumerated() {
            if i > 0 { out += "," }
            out += "\(JSONText.string(name)):\(JSONText.number(i < pose.count ? pose[i] : .nan))"
        }
        out += "},\"startSeconds\":\(JSONText.number(startSeconds)),\"endSeconds\":\(JSONText.number(endSeconds))"
        if redo { out += ",\"redo\":true" }
        if let bracket { out += ",\"bracket\":\(bracket)" }
        if interrupted { out += ",\"interrupted\":true" }
        if let at { out += ",\"at\":\(JSONText.string(at))" }
        if let file { out += ",\"file\":\(JSONText.string(file))" }
        if let downloaded { out += ",\"downloaded\":\(JSONText.string(downloaded))" }
        if let rampEV { out += ",\"rampEV\":\(JSONText.number(rampEV))" }
        if let settleSeconds { out += ",\"settleSeconds\":\(JSONText.number(settleSeconds))" }
        if let settleMeasured { out += ",\"settleMeasured\":\(settleMeasured)" }
        if let edgeNs { out += ",\"edgeNs\":\(edgeNs)" }
        if !settings.isEmpty {
            out += ",\"settings\":{" + settings.map { "\(JSONText.string($0.name)):\(JSONText.string($0.value))" }.joined(separator: ",") + "}"
        }
        return out + "}"
    }

    init(reading object: ObjectReader) throws(FileError) {
        step = try object.required("step").integer(in: 1...Int(Int32.max))
        label = try object.required("label").string()
        let poseObject = try object.required("pose").object()
        axisNames = []
        pose = []
        for member in poseObject.members {
            axisNames.append(member.key)
            // Positions as a program may ask for them: a shot log never holds more, and a
            // hostile one (1e308) must not become a 309-digit angle in an export.
            pose.append(try ValueReader(member.value, poseObject.context.appending(key: member.key)).number(in: Bounds.programPosition))
        }
        startSeconds = try object.required("startSeconds").number()
        let end = try object.required("endSeconds")
        endSeconds = try end.number()
        guard endSeconds >= startSeconds else {
            throw end.error("\(format(endSeconds)) s is before startSeconds \(format(startSeconds)) s; valid: endSeconds ≥ startSeconds")
        }
        redo = try object.optional("redo")?.bool() ?? false
        bracket = try object.optional("bracket")?.integer(in: 1...Int(Int32.max))
        interrupted = try object.optional("interrupted")?.bool() ?? false
        file = try object.optional("file")?.nonEmptyString()
        downloaded = try object.optional("downloaded")?.nonEmptyString()
        if let time = object.optional("at") {
            let text = try time.string()
            guard UTCTime.parse(text) != nil else {
                throw time.error("\"\(text.prefix(40))\" is not a UTC time; valid: ISO 8601 with a zone, e.g. 2026-11-23T20:31:57.412Z")
            }
            at = text
        } else {
            at = nil
        }
        rampEV = try object.optional("rampEV")?.number(in: -20...30)
        settleSeconds = try object.optional("settleSeconds")?.number(in: Bounds.settleSeconds, unit: "s")
        settleMeasured = try object.optional("settleMeasured")?.bool()
        rig = try object.optional("rig")?.nonEmptyString()
        edgeNs = try object.optional("edgeNs").map { v throws(FileError) in Int64(try v.integer(in: 0...Int(Int64.max))) }
        settings = []
        if let settingsObject = try object.optional("settings")?.object() {
            for member in settingsObject.members {
                settings.append(CameraSetting(member.key, try settingsObject.required(member.key).string()))
            }
        }
        try object.finish()
    }
}
