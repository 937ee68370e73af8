/// The physical bounds every number in a rig or program file is checked against at parse
/// time (the error names the range). They are wide enough for any real pan/tilt head and
/// tight enough that no later arithmetic — tick counts, shot grids, plot scales — can
/// overflow, trap or run for minutes. `schema/*.json` and the README list the same.
public enum Bounds {
    /// Servo angles in a calibration (`angleDeg`, `calibration`), degrees.
    public static let calibrationAngleDegrees: ClosedRange<Double> = -360...360
    /// Positions a program asks for (keyframe values, step poses), degrees or %: wider
    /// than any axis so `rig check` reports a position past the soft limits as a limit
    /// violation with its time, not as a parse error.
    public static let programPosition: ClosedRange<Double> = -3600...3600
    /// maxVelocity, °/s or %/s.
    public static let velocity: ClosedRange<Double> = 0.1...10_000
    /// maxAcceleration, °/s² or %/s².
    public static let acceleration: ClosedRange<Double> = 0.1...100_000
    /// Keyframe times, seconds (24 h).
    public static let keyTimeSeconds: ClosedRange<Double> = 0...86_400
    /// Bezier handles' y (overshoot factor of a segment).
    public static let bezierY: ClosedRange<Double> = -10...10
    /// Settle times, seconds.
    public static let settleSeconds: ClosedRange<Double> = 0...3600
    /// Steps in a `steps` program, frames in a timelapse.
    public static let maxSteps = 100_000
    /// Shots in a panorama.
    public static let maxShots = 10_000
    /// Panorama shot centres: pan, and tilt (the horizon is 0, the zenith 90).
    public static let panDegrees: ClosedRange<Double> = -360...360
    public static let tiltDegrees: ClosedRange<Double> = -90...90
    /// `interval:SECONDS` triggers.
    public static let intervalSeconds: ClosedRange<Double> = 0.01...86_400
    /// Ticks `rig check`, `plan`, `plot` and `play` simulate at most (lead-in, every move
    /// and settle, park): 27.8 h of motion at 100 Hz. A longer program is refused before
    /// any simulation.
    public static let maxTicks = 10_000_000
}
