import RigCore

/// How the control loop goes on after a stall without a velocity step, on the loop thread.
///
/// A stall (the process stopped, the CPU busy elsewhere) leaves the output without frames:
/// the frame that finally comes moved the rig over the whole gap, so the rig slowed to
/// `period / gap` of its speed. Going on at the program's speed would be a jump in velocity
/// that no acceleration limit allows (measured in wall time, as the servo sees it). So the
/// loop plays the source's timeline at `rate` source ticks per tick, interpolating between
/// its last two frames: the rate drops to the speed the rig really had, then rises back to
/// 1 with the added acceleration (`slope · v`) kept within half of what the source leaves
/// at the rate it reaches (`(1 − rate²) · maxAcceleration`: a timeline played at `rate`
/// accelerates `rate²` as hard) and its growth within the axis's jerk. At rate 1 the source's frames pass as they
/// are. The timeline is late by what the stall and the ramp cost, never made up in a burst.
///
/// On a group's shared clock (`SharedTimeline`, once engaged) the timeline is not left
/// late: `track` steers the rate towards the reference's, above it while behind (see
/// `track`).
struct ResumeRamp {
    private let accelerations: [Double]
    private let velocities: [Double]
    private let jerks: [Double]
    private let tickSeconds: Double
    /// Source ticks per loop tick: 1 but after a stall.
    private(set) var rate = 1.0
    /// d(rate)/dt, per second.
    private var slope = 0.0
    /// Where the output is between the source's previous frame (0) and its latest (1).
    private(set) var phase = 1.0
    /// On a shared clock: source ticks the timeline is behind the reference, and played
    /// since it was engaged.
    private(set) var lag = 0.0
    private(set) var position = 0.0
    /// The highest rate the path allowed at the last `track` (1 where it leaves no room).
    private(set) var cap = 1.0

    init(axes: [Axis], tickSeconds: Double) {
        accelerations = axes.map(\.maxAcceleration)
        velocities = axes.map(\.maxVelocity)
        // The ramp is not shaped: a shaped axis's trapezoid jerk does not apply to it.
        jerks = axes.map(\.forUnshapedMoves.maxJerk)
        self.tickSeconds = tickSeconds
    }

    /// Moves the timeline on by `rate` (once a tick), then `takeFrame` until it says no.
    mutating func move() {
        phase += rate
        position += rate
    }

    /// The path starts: its timeline counts from here.
    mutating func startPath() {
        position = 0
        lag = 0
    }

    /// A path rejoined part-way: the source rests at its frame of tick `frameTick` (its
    /// latest frame, taken), so the timeline counts from there (a tick behind the frame,
    /// as a path started from its beginning counts), at rest: rate 0, phase at that frame.
    mutating func startPath(restingAtFrame frameTick: Int) {
        position = Double(frameTick - 1)
        lag = 0
        rate = 0
        slope = 0
        phase = 1
    }

    static let lagTimeConstant = 0.5
    static let rateTimeConstant = 0.1

    /// On a shared clock: the reference is at `referenceTicks` of path time.
    mutating func compare(referenceTicks: Double) {
        lag = referenceTicks - position
    }

    /// Off the shared clock: what it was behind is no longer made up.
    mutating func forgetLag() { lag = 0 }

    /// True when the source must give its next frame (at a rate above 1, up to twice a
    /// tick). A finished source gives none: the output catches up with its last frame.
    mutating func takeFrame(sourceFinished: Bool) -> Bool {
        guard phase > 1 else { return false }
        if sourceFinished {
            phase = 1
            return false
        }
        phase -= 1
        return true
    }

    /// The output's frame: the source's latest at phase 1, else between it and the one before.
    func interpolate(from previous: [Double], to next: [Double], into out: inout [Double]) {
        if phase >= 1 {
            for i in out.indices { out[i] = next[i] }
        } else {
            for i in out.indices { out[i] = previous[i] + phase * (next[i] - previous[i]) }
        }
    }

    /// The frame just sent reached the rig late: it moved at `fraction` of the timeline's speed.
    mutating func slow(to fraction: Double) {
        rate *= min(max(fraction, 0), 1)
        slope = 0
    }

    /// After each frame: the rate rises towards 1 within the limits, for the source's
    /// current velocity (its last two frames).
    mutating func speedUp(previous: [Double], next: [Double]) {
        guard rate < 1 else { return }
        var cap = Double.infinity
        var jerkStep = Double.infinity
        let dt = tickSeconds
        for i in accelerations.indices {
            let v = abs(next[i] - previous[i]) / dt
            guard v > 0, v.isFinite else { continue }
            // The source's frames are played at the rate this tick sets, not the one before:
            // slope · v ≤ ½ · (1 − (rate + slope · dt)²) · a. A rise in one tick from far
            // below 1 while the source speeds up at its limit would otherwise take the rig
            // past `a` (a short move, resumed near its start after a stall).
            let a = accelerations[i]
            let qa = 0.5 * a * dt * dt
            let qb = a * rate * dt + v
            let qc = 0.5 * a * (1 - rate * rate)
            cap = min(cap, 2 * qc / (qb + (qb * qb + 4 * qa * qc).squareRoot()))
            jerkStep = min(jerkStep, jerks[i] / v * dt)
        }
        slope = min(slope + jerkStep, cap)
        rate = min(1, rate + slope * tickSeconds)
        if 1 - rate < 1e-6 {
            rate = 1
            slope = 0
        }
    }

    /// On a shared clock, after each frame: steers the rate towards `referenceRate` plus
    /// what brings the lag to 0 (the most that can still be ramped back down by the time
    /// the lag is gone), within what `peaks` says the path asks of each axis near
    /// `position` and soon after: the rate stays where `rate · v` is under the axis's
    /// velocity and `rate² · a` well under its acceleration; the rate's slope adds at most
    /// `0.9 · A − max(rate, rate²) · a` of acceleration (at `v`), and grows by at most
    /// the axis's jerk. It never goes below 0 (a timeline does not run back).
    /// `holdHere`: brake to rest and hold, whatever the reference says.
    mutating func track(referenceRate: Double, peaks: PathPeaks, holdHere: Bool = false) {
        let dt = tickSeconds
        var sigma = Double.infinity
        var jerkStep = Double.infinity
        var highest = 2.0
        for i in accelerations.indices where i < peaks.velocity.count {
            let p = peaks.at(axis: i, tick: position)
            let a = accelerations[i]
            if p.aheadVelocity > 0 { highest = min(highest, 0.97 * velocities[i] / p.aheadVelocity) }
            if p.aheadAcceleration > 0 { highest = min(highest, (0.6 * a / p.aheadAcceleration).squareRoot()) }
            let v = p.velocity
            guard v > 0, v.isFinite else { continue }
            let load = max(rate, rate * rate) * p.acceleration
            sigma = min(sigma, max(0, 0.9 * a - load) / v)
            jerkStep = min(jerkStep, jerks[i] / v * dt)
        }
        // Nothing moves here: the rate may change freely, but not in a jump.
        if !sigma.isFinite { sigma = 10 }
        if !jerkStep.isFinite { jerkStep = 100 * dt }
        cap = max(1, highest.isFinite ? highest : 1)
        // The lag is made up with a time constant of `lagSeconds` (half a second), the rate
        // follows that within a tenth: a damped pursuit, never a hunt around the clock.
        let lagSeconds = lag * tickSeconds
        var target = referenceRate + lagSeconds / Self.lagTimeConstant
        // On a hold, and there (within a twentieth of a tick): at rest.
        if referenceRate == 0, lagSeconds < 0.05 * dt { target = 0 }
        target = holdHere ? 0 : min(max(target, 0), max(cap, referenceRate))
        let wanted = (target - rate) / Self.rateTimeConstant
        slope = min(max(wanted, slope - jerkStep), slope + jerkStep)
        slope = min(max(slope, -sigma), sigma)
        // Not clamped to the cap: a cap that came down is followed down at the slope.
        rate = max(rate + slope * dt, 0)
        if target == 0, rate < 1e-3 {
            // At rest: the last thousandth is less than a tick's change of speed.
            rate = 0
            slope = 0
        }
        if rate == 0, slope < 0 { slope = 0 }
    }
}
