import RigCore

/// What a text display (the BLEControl board's 2×16 LCD) shows when no step trigger
/// writes to it (Cascable step sync does): where the program is and what the rig does, in
/// at most 15 characters a line (the firmware's buffer), and rarely enough that the LCD
/// never takes link budget from the servos.
///
/// A stepped program: `step 3/12` over `moving`, `settling`, `shooting`, `waiting`,
/// `parking`…; a keyframes program: `t 12/60 s` over `playing`. A change of step or state
/// is shown at once (the board's own spacing of LCD commands applies); a clock that only
/// ticks on, at most every `clockSeconds`.
public struct TextDisplayFeed: Sendable {
    /// The longest line the board's firmware takes (a 16-byte buffer with its terminator).
    public static let lineLength = 15
    /// How often a line that changed only by its clock is sent.
    public var clockSeconds = 5.0
    private var shown: (line1: String, line2: String)?
    private var shownState: String?
    private var shownAt = -Double.infinity

    public init() {}

    /// The two lines for `progress`, each at most ``lineLength`` characters.
    public static func lines(_ progress: PlaybackProgress) -> (line1: String, line2: String) {
        let line1: String
        if let step = progress.step, let count = progress.stepCount {
            line1 = "step \(step)/\(count)"
        } else if let total = progress.totalSeconds {
            line1 = "t \(Int(progress.elapsedSeconds.rounded(.down)))/\(Int(total.rounded(.up))) s"
        } else if let count = progress.stepCount {
            line1 = "\(count) steps"
        } else {
            line1 = "t \(Int(progress.elapsedSeconds.rounded(.down))) s"
        }
        return (fit(line1), fit(progress.phase.description))
    }

    /// The lines to send now, or nil when the display should keep what it shows:
    /// `nowSeconds` is any monotonic clock.
    public mutating func update(_ progress: PlaybackProgress, nowSeconds: Double) -> (line1: String, line2: String)? {
        let next = Self.lines(progress)
        // The state without the clock: step and phase (a keyframes clock is not state).
        let state = "\(progress.step ?? -1) \(progress.stepCount ?? -1) \(next.line2)"
        if let shown, shown == next { return nil }
        if state == shownState, nowSeconds - shownAt < clockSeconds { return nil }
        shown = next
        shownState = state
        shownAt = nowSeconds
        return next
    }

    private static func fit(_ text: String) -> String {
        String(text.prefix(lineLength))
    }
}
