import RigFormat

/// `{"event":"missed", …}`: a shot that was not taken as planned, and why. With
/// `--trigger interval:S`, a shot that could not start on its slot (the move, settle or
/// previous shot took longer than planned at run time): the run does not stretch the
/// interval silently, it shoots late and says so here. With a camera that confirms its
/// shots, a shot it never confirmed (`reason`): the run stopped there.
public struct ShotLogMissed: Sendable, Equatable {
    /// The step whose shot was late or not taken, 1-based.
    public var step: Int
    /// The frame of the step's bracket (1-based) the camera did not take, when the program
    /// takes several per step.
    public var bracket: Int?
    /// When the shot should have started (an interval slot), on the run's trace clock.
    public var slotSeconds: Double?
    /// When the shot did start (or was tried).
    public var startSeconds: Double
    /// Why the shot was not taken (the camera's words); nil for a late slot.
    public var reason: String?

    public init(step: Int, bracket: Int? = nil, slotSeconds: Double?, startSeconds: Double, reason: String? = nil) {
        self.step = step
        self.bracket = bracket
        self.slotSeconds = slotSeconds
        self.startSeconds = startSeconds
        self.reason = reason
    }

    public var lateSeconds: Double { slotSeconds.map { startSeconds - $0 } ?? 0 }

    /// The event as one line of JSON, without the line break.
    public func jsonLine() -> String {
        var out = "{\"event\":\"missed\",\"step\":\(step)"
        if let bracket { out += ",\"bracket\":\(bracket)" }
        if let slotSeconds { out += ",\"slotSeconds\":\(JSONText.number(slotSeconds))" }
        out += ",\"startSeconds\":\(JSONText.number(startSeconds))"
        if let reason { out += ",\"reason\":\(JSONText.string(reason))" }
        return out + "}"
    }

    init(reading object: ObjectReader) throws(FileError) {
        step = try object.required("step").integer(in: 1...Int(Int32.max))
        bracket = try object.optional("bracket")?.integer(in: 1...Int(Int32.max))
        slotSeconds = try object.optional("slotSeconds")?.number()
        startSeconds = try object.required("startSeconds").number()
        reason = try object.optional("reason")?.string()
        try object.finish()
    }
}
