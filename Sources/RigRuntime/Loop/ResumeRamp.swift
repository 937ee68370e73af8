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
struct ResumeRamp {
    private let accelerations: [Double]
    private let jerks: [Double]
    private let tickSeconds: Double
    /// Source ticks per loop tick: 1 but after a stall.
    private(set) var rate = 1.0
    /// d(rate)/dt, per second.
    private var slope = 0.0
    /// Where the output is between the source's previous frame (0) and its latest (1).
    private(set) var phase = 1.0

    init(axes: [Axis], tickSeconds: Double) {
        accelerations = axes.map(\.maxAcceleration)
        jerks = axes.map(\.maxJerk)
        self.tickSeconds = tickSeconds
    }

    /// Moves the timeline on by `rate`; true when the source must give its next frame. A
    /// finished source gives none: the output catches up with its last frame.
    mutating func advance(sourceFinished: Bool) -> Bool {
        phase += rate
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
}
