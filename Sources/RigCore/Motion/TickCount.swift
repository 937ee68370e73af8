/// The one seconds → ticks conversion. `slack`: +1e-9 where the count must never come short
/// (a move stretched to whole ticks stays within its limits), −1e-9 where binary noise must
/// not add a tick (0.3 s at 100 Hz is 30 ticks, not 31), 0 otherwise. (`MotionBudget`
/// counts in `Double`, past what an `Int` holds, and rounds the same way as the moves.)
///
/// Whole ticks covering `seconds`, rounded up, for any Double: NaN and negatives are 0, and
/// the count is clamped to `Int32.max` (a year at 500 Hz is 1.6e10 — beyond anything the
/// parse-time bounds let through, so the clamp never shortens a real move; it only keeps
/// a `Double → Int` conversion from trapping).
@inline(__always)
public func tickCount(seconds: Double, tickSeconds: Double, slack: Double = 0) -> Int {
    let ticks = (seconds / tickSeconds * (1 + slack)).rounded(.up)
    guard ticks > 0 else { return 0 }  // also NaN
    return ticks < Double(Int32.max) ? Int(ticks) : Int(Int32.max)
}
