/// `{"event":"missed", …}`: with `--trigger interval:S` a shot could not start on its
/// slot (the move, settle or previous shot took longer than planned at run time). The
/// run does not stretch the interval silently: it shoots late and says so here.
public struct ShotLogMissed: Sendable, Equatable {
    /// The step whose shot was late, 1-based.
    public var step: Int
    /// When the shot should have started, and when it did, on the run's trace clock.
    public var slotSeconds: Double
    public var startSeconds: Double

    public init(step: Int, slotSeconds: Double, startSeconds: Double) {
        self.step = step
        self.slotSeconds = slotSeconds
        self.startSeconds = startSeconds
    }

    public var lateSeconds: Double { startSeconds - slotSeconds }

    /// The event as one line of JSON, without the line break.
    public func jsonLine() -> String {
        "{\"event\":\"missed\",\"step\":\(step),\"slotSeconds\":\(JSONText.number(slotSeconds)),\"startSeconds\":\(JSONText.number(startSeconds))}"
    }

    init(reading object: ObjectReader) throws(FileError) {
        step = try object.required("step").integer(in: 1...Int(Int32.max))
        slotSeconds = try object.required("slotSeconds").number()
        startSeconds = try object.required("startSeconds").number()
        try object.finish()
    }
}
