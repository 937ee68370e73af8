import RigFormat

/// `{"event":"start", …}`: a run of a stepped program began (or resumed: a resumed run
/// appends a new `start` to the same log, with `fromStep`).
///
/// Times of the events that follow, up to the next `start`, count from this event: they
/// are on the clock of that run's trace (`time_s`).
public struct ShotLogStart: Sendable, Equatable {
    /// The program file as given on the command line.
    public var program: String
    /// The program file's real path (absolute, symlinks resolved): whose log this is when
    /// two programs share a file name (`a/pano.json`, `b/pano.json`). Nil in older logs.
    public var programPath: String?
    /// SHA-256 of the program file's bytes, lowercase hex: `--resume` refuses a changed file.
    public var programSha256: String
    /// How many steps the program has.
    public var steps: Int
    /// Wall-clock start, UTC, ISO 8601 (`2026-11-23T20:31:54Z`), for people and stitchers.
    public var startedAt: String?
    /// The first step this run plays (1-based) when it does not start at step 1
    /// (`--resume`, `--from-step`).
    public var fromStep: Int?
    /// Where the rig stood when the run began (axis names and positions): a panorama's
    /// shooting order depends on it, so `--resume` replans from the same pose. Empty: not recorded.
    public var startAxisNames: [String]
    public var startPose: [Double]
    /// What decided where the run's shots pointed (``Rig/pointing``): each axis's channel
    /// and angle ↔ pulse mapping, by axis name. Empty in logs written before it was recorded.
    public var rigPointing: [AxisPointing]
    /// SHA-256 of `rigPointing` (one `axis: description` line each), lowercase hex, as the
    /// log records it beside the lines (derived from them, so it is read and not kept).
    public var rigSha256: String? { rigPointing.isEmpty ? nil : Self.sha256(pointing: rigPointing) }

    /// The hash `rigSha256` holds for `pointing`.
    public static func sha256(pointing: [AxisPointing]) -> String {
        SHA256.hex(Array(pointing.map { "\($0.axis): \($0.description)\n" }.joined().utf8))
    }

    public init(
        program: String, programPath: String? = nil, programSha256: String, steps: Int, startedAt: String? = nil, fromStep: Int? = nil,
        startAxisNames: [String] = [], startPose: [Double] = [], rigPointing: [AxisPointing] = []
    ) {
        self.program = program
        self.programPath = programPath
        self.programSha256 = programSha256
        self.steps = steps
        self.startedAt = startedAt
        self.fromStep = fromStep
        self.startAxisNames = startAxisNames
        self.startPose = startPose
        self.rigPointing = rigPointing
    }

    /// The event as one line of JSON, without the line break.
    public func jsonLine() -> String {
        var out = "{\"event\":\"start\",\"program\":\(JSONText.string(program))"
        if let programPath { out += ",\"programPath\":\(JSONText.string(programPath))" }
        out += ",\"programSha256\":\(JSONText.string(programSha256)),\"steps\":\(steps)"
        if let startedAt { out += ",\"startedAt\":\(JSONText.string(startedAt))" }
        if let fromStep { out += ",\"fromStep\":\(fromStep)" }
        if !startAxisNames.isEmpty {
            out += ",\"startPose\":{"
            for (i, name) in startAxisNames.enumerated() {
                if i > 0 { out += "," }
                out += "\(JSONText.string(name)):\(JSONText.number(i < startPose.count ? startPose[i] : .nan))"
            }
            out += "}"
        }
        if !rigPointing.isEmpty {
            out += ",\"rigPointing\":{"
            out += rigPointing.map { "\(JSONText.string($0.axis)):\(JSONText.string($0.description))" }.joined(separator: ",")
            out += "}"
        }
        if let rigSha256 { out += ",\"rigSha256\":\(JSONText.string(rigSha256))" }
        return out + "}"
    }

    init(reading object: ObjectReader) throws(FileError) {
        program = try object.required("program").string()
        programPath = try object.optional("programPath")?.nonEmptyString()
        let hash = try object.required("programSha256")
        programSha256 = try hash.string()
        guard programSha256.utf8.count == 64, programSha256.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }) else {
            throw hash.error("expected 64 lowercase hex digits (a SHA-256), found \(programSha256.utf8.count) characters")
        }
        steps = try object.required("steps").integer(in: 0...Int(Int32.max))
        startedAt = try object.optional("startedAt")?.string()
        fromStep = try object.optional("fromStep")?.integer(in: 1...Int(Int32.max))
        startAxisNames = []
        startPose = []
        if let pose = try object.optional("startPose")?.object() {
            for member in pose.members {
                startAxisNames.append(member.key)
                startPose.append(try ValueReader(member.value, pose.context.appending(key: member.key)).number())
            }
        }
        rigPointing = []
        if let pointing = try object.optional("rigPointing")?.object() {
            for member in pointing.members {
                rigPointing.append(
                    AxisPointing(axis: member.key, description: try ValueReader(member.value, pointing.context.appending(key: member.key)).string()))
            }
        }
        _ = try object.optional("rigSha256")?.string()
        try object.finish()
    }
}
