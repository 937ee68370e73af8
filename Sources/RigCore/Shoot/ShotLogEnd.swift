import RigFormat

/// `{"event":"end", …}`: the run is over. A log whose last run has no `end` was cut
/// short (a crash, kill -9, a power cut) and `--resume` treats it as unfinished, as it
/// does a run that ended `stopped` or `fault`.
public struct ShotLogEnd: Sendable, Equatable {
    public enum Reason: String, Sendable, Equatable, CaseIterable {
        /// Every step was shot.
        case done
        /// The user stopped the run (q, Ctrl-C, SIGTERM, Cascable's stop).
        case stopped
        /// An output, the camera or a trigger failed.
        case fault
    }

    public var reason: Reason
    /// The step of the last shot (1-based); nil when the run took no shot.
    public var lastStep: Int?
    /// What went wrong, for `fault`.
    public var message: String?

    public init(reason: Reason, lastStep: Int?, message: String? = nil) {
        self.reason = reason
        self.lastStep = lastStep
        self.message = message
    }

    /// The event as one line of JSON, without the line break.
    public func jsonLine() -> String {
        var out = "{\"event\":\"end\",\"reason\":\"\(reason.rawValue)\",\"lastStep\":\(lastStep.map(String.init) ?? "null")"
        if let message { out += ",\"message\":\(JSONText.string(message))" }
        return out + "}"
    }

    init(reading object: ObjectReader) throws(FileError) {
        let reasonText = try object.required("reason").oneOf(Reason.allCases.map(\.rawValue))
        reason = Reason(rawValue: reasonText) ?? .fault
        let last = try object.required("lastStep", "the step of the last shot, or null")
        lastStep = last.isNull() ? nil : try last.integer(in: 1...Int(Int32.max))
        message = try object.optional("message")?.string()
        try object.finish()
    }
}
