/// What a command-driven rig is told to do: by the gamepad (`rig jog`), by HTTP
/// (`rig serve`), by Dragonframe (`rig serve dfmoco`). Applied by a `CommandSource` at the
/// start of a loop tick; every resulting frame stays within the axes' limits.
public enum MotionCommand: Sendable, Equatable {
    /// A limited rest-to-rest move (all axes arrive together, within velocity/acceleration limits
    /// and the axis speed scale) to `pose`; nil keeps an axis where it is. Targets outside the
    /// soft limits are clamped to the limit and reported (CommandSource.clampedAxes / an event).
    /// A rig still moving first brakes to rest. Rejected (ignored and counted in
    /// `CommandSource.rejectedCommands`) if the pose has the wrong number of axes or a
    /// value that is not finite.
    case goTo(pose: [Double?])
    /// Jog: per-axis velocity as a fraction −1…1 of maxVelocity (times the axis speed scale),
    /// reached within maxAcceleration; the limiter slows each axis to a stop before its soft
    /// limits. A deadman: when no new `.jog` arrives within the source's `jogTimeoutSeconds`
    /// (counted in loop ticks), the rig brakes to a stop. Fractions beyond ±1 are clamped;
    /// the wrong count or a value that is not finite rejects the command.
    case jog(velocityFractions: [Double])
    /// Brake every axis to rest at its acceleration limit (cancels a move or a jog); the source
    /// keeps running and accepts new commands.
    case halt
    /// Caps an axis's velocity for later moves and jogs at `fraction` (0 < f ≤ 1) of maxVelocity.
    /// An axis out of range or a fraction outside 0 < f ≤ 1 rejects the command.
    case setSpeedScale(axis: Int, fraction: Double)
    /// Plays timed paths through the limiter (a go-motion move): one track per axis, nil
    /// keeps an axis where it is. Time 0 is the last frame before the command is applied
    /// (the frame of the tick that applies it is the tracks at one tick); a rig still
    /// moving first brakes to rest (the paths then start late, and from where it stopped
    /// the limiter eases onto them). Rejected if the count is not one per axis. Ends idle
    /// once the last track has ended.
    case follow(tracks: [AxisTrack?])
}
