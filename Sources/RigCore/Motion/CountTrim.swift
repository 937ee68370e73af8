import FoundationEssentials
import Glibc

/// The one-count trim: after a shaped move, an output that rounds pulses to counts (a
/// PCA9685, the simulator's model of one) sends one axis's pulse one count up (or down)
/// for a few ticks and back, so that pulse's two count steps cancel the ringing the move's
/// count staircase left (the shaper cancels the smooth move's, not the rounding's).
///
/// The output asks it once per tick and axis (`counts(axis:commandedMicroseconds:quantizedMicroseconds:)`)
/// and adds the answer to the count it rounded to. The trim keeps a model of the camera on
/// each axis (a damped spring at the axis's shaper's frequency and damping) driven by the
/// pulses actually sent, from the pulse the output started with (`start(axis:quantizedMicroseconds:)`).
/// It plans the pulse (its width up to a ringing period, either sign) that leaves the
/// modelled ringing's rate amplitude below the goal and ends earliest (none if the counts
/// alone get there as soon), failing that the one that leaves least, if it halves what the
/// counts alone would leave by then; a pulse of τ has a response of amplitude
/// 2·count·|sin(ωτ/2)|, its phase set by its start.
///
/// When the loop knows a move's coming frames (a program's planned move:
/// `expect(axis:ticks:pulse:)` at the move's start), the pulse may start up to a ringing
/// period before the move's frames stop changing, and is planned then on the counts the
/// move's last ticks will send; each of those ticks is checked against the expectation,
/// and any other pulse drops the plan (the frames were not the planned ones: a stop, a
/// slowed timeline). Without it (jog, a path's end, a dropped plan) it plans on the first
/// tick after the frames stop changing and starts then. Any new motion cancels a plan.
///
/// Why it is legal below the limiter: it is the output's own rounding moved by one count
/// for a few ticks, a step of the size the rounding already makes on every count boundary
/// of every move (one count: 0.11° of a 2000 µs / 180° servo at 200 Hz), and a trimmed
/// pulse is never sent outside the axis's soft limits or its calibrated pulse range (that
/// sign is not tried). The frames, their velocities and accelerations, are the limiter's as
/// before.
///
/// Where it works, and only there, it is on: a servo axis with a `shaper` (its frequency is
/// what the trim cancels; `"trim": false` in the shaper turns it off), an output that latches
/// a count every tick (its PWM period within 5 % of the loop's tick: 200 Hz at a 200 Hz
/// loop), and a ringing period of 4…128 ticks (a plan searches a period's starts × widths in
/// one tick). At 50 Hz a pulse is latched every fourth tick and 20 ms timing is too coarse to
/// cancel anything: `init` returns nil. Pure: the model and its tables are sized at `init`,
/// `counts` and `expect` allocate nothing (they run on the loop thread).
public struct CountTrim: Sendable, Equatable {
    /// A trimmed axis: its spring, the pulse's response table, and the plan.
    struct AxisTrim: Sendable, Equatable {
        var calibration: Calibration
        var softMin: Double
        var softMax: Double
        var pulseRange: ClosedRange<Double>
        var omega: Double
        var payload: Payload
        var model: PayloadResponse
        /// The camera (angle, rate) `k` ticks after the horn stepped from rest at 0 to 1°
        /// (`k` = 0 … 3 ringing periods + 1): a pulse is one step up and one down.
        var stepAngle: [Double]
        var stepRate: [Double]
        var span: Int
        var started = false
        var moving = false
        var lastCommanded = 0.0
        var tick = 0
        var plan: Plan?
        /// The move announced by `expect`: its last ticks' pulses (commanded, and as the
        /// output rounds them) for ticks `aheadFirst … arrival`; nil `arrival`: none.
        var arrival: Int?
        var aheadFirst = 0
        var aheadCommanded: [Double]
        var aheadQuantized: [Double]
    }

    /// A planned pulse: ticks `start..<end` (its axis's tick count), `sign` counts.
    struct Plan: Sendable, Equatable {
        var start: Int
        var end: Int
        var sign: Int
    }

    /// Per axis of the rig (nil: not trimmed).
    var axes: [AxisTrim?]
    /// The rate amplitude a plan aims below, °/s.
    public let goalDegreesPerSecond: Double
    /// One count, µs.
    public let countMicroseconds: Double

    /// The PWM period may differ from the loop's tick by this fraction (a PCA9685's
    /// PRE_SCALE gives 5.079 ms for 200 Hz; a count is then latched every tick but about
    /// one in 60).
    public static let periodTolerance = 0.05
    /// Counts per PWM period (a PCA9685's 12 bits).
    public static let countsPerPeriod = 4096.0
    /// The longest ringing period the trim plans over, in ticks.
    public static let maxSpanTicks = 128
    /// How many of a move's last ticks `expect` reads: a pulse starts at most a ringing
    /// period before the move's frames stop.
    public static let aheadTicks = maxSpanTicks + 1

    /// The trim for `axes` on an output with PWM period `periodMicroseconds`, the loop
    /// ticking every `tickSeconds`, aiming below `goalDegreesPerSecond` of ringing; nil when
    /// no axis can be trimmed (no shaped servo axis, the shaper's `trim` off, or a count not
    /// latched every tick).
    public init?(axes: [Axis], tickSeconds: Double, periodMicroseconds: Double, goalDegreesPerSecond: Double) {
        let period = periodMicroseconds / 1_000_000
        guard tickSeconds > 0, abs(period - tickSeconds) <= Self.periodTolerance * tickSeconds, goalDegreesPerSecond > 0 else { return nil }
        self.goalDegreesPerSecond = goalDegreesPerSecond
        countMicroseconds = periodMicroseconds / Self.countsPerPeriod
        self.axes = axes.map { axis in
            guard axis.kind == .servo, let shaper = axis.shaper, shaper.trim, let calibration = axis.calibration,
                let low = calibration.pulses.min(), let high = calibration.pulses.max()
            else { return nil }
            let payload = Payload(frequencyHz: shaper.frequencyHz, damping: shaper.damping)
            let span = Int((1 / (payload.frequencyHz * tickSeconds)).rounded(.up))
            guard (4...Self.maxSpanTicks).contains(span) else { return nil }
            var step = PayloadResponse(payload: payload, tickSeconds: tickSeconds, angle: 0)
            var angles = [0.0]
            var rates = [0.0]
            for _ in 0..<(3 * span + 1) {
                step.step(horn: 1)
                angles.append(step.angle)
                rates.append(step.rate)
            }
            return AxisTrim(
                calibration: calibration, softMin: axis.softMin, softMax: axis.softMax, pulseRange: low...high,
                omega: 2 * Double.pi * payload.frequencyHz, payload: payload,
                model: PayloadResponse(payload: payload, tickSeconds: tickSeconds, angle: 0), stepAngle: angles, stepRate: rates, span: span,
                aheadCommanded: [Double](repeating: .nan, count: span + 1), aheadQuantized: [Double](repeating: .nan, count: span + 1))
        }
        guard self.axes.contains(where: { $0 != nil }) else { return nil }
    }

    /// The trim for `rig` on an output with PWM period `periodMicroseconds`, aiming below
    /// half its measured settle's threshold (the default threshold's without one).
    public init?(rig: Rig, periodMicroseconds: Double) {
        let threshold = rig.settle?.thresholdDegreesPerSecond ?? MeasuredSettle(sensor: .sim).thresholdDegreesPerSecond
        self.init(axes: rig.axes, tickSeconds: rig.tickSeconds, periodMicroseconds: periodMicroseconds, goalDegreesPerSecond: threshold / 2)
    }

    /// Whether axis `axis` (rig order) is trimmed.
    public func trims(axis: Int) -> Bool { axes.indices.contains(axis) && axes[axis] != nil }

    /// The output started axis `axis` on `quantizedMicroseconds` (a whole count): the
    /// camera rests there. Without it the first tick's pulse is taken for the rest.
    public mutating func start(axis: Int, quantizedMicroseconds: Double) {
        guard axes.indices.contains(axis), var a = axes[axis] else { return }
        a.started = true
        a.lastCommanded = .nan
        a.model.angle = a.calibration.angle(forPulseMicroseconds: quantizedMicroseconds)
        a.model.rate = 0
        axes[axis] = a
    }

    /// A move's coming pulses on axis `axis`: its frames stop changing `ticks` ticks from
    /// now (the next `counts` call is tick 1); `pulse(k)` gives tick `k`'s commanded pulse
    /// and the whole count the output will round it to, µs (asked only for the last
    /// `aheadTicks` ticks). Call after this tick's `counts`.
    public mutating func expect(axis: Int, ticks: Int, pulse: (Int) -> (commanded: Double, quantized: Double)) {
        guard axes.indices.contains(axis), var a = axes[axis], a.started, ticks >= 1 else { return }
        let arrival = a.tick + ticks
        a.aheadFirst = max(a.tick + 1, arrival - a.span)
        for t in a.aheadFirst...arrival {
            let p = pulse(t - a.tick)
            a.aheadCommanded[t - a.aheadFirst] = p.commanded
            a.aheadQuantized[t - a.aheadFirst] = p.quantized
        }
        a.arrival = arrival
        a.plan = nil
        axes[axis] = a
    }

    /// `expect(axis:ticks:pulse:)` for every trimmed axis from a loop's table of coming
    /// pulses (`Output.expect(pulses:window:ticks:)`: `window` rows of one column per axis,
    /// the last row tick `ticks`), each rounded by the output's `quantize`.
    public mutating func expect(pulses: [Double], window: Int, ticks: Int, quantize: (Double) -> Double) {
        let columns = axes.count
        guard window > 0, ticks >= 1, pulses.count >= window * columns else { return }
        for i in axes.indices {
            guard let span = axes[i]?.span else { continue }
            // The rows the trim reads must be there and be pulses.
            let first = max(1, ticks - span)
            guard ticks - first < window else { continue }
            var known = true
            for k in first...ticks where pulses[(k - ticks + window - 1) * columns + i].isNaN { known = false }
            guard known else { continue }
            expect(axis: i, ticks: ticks) { k in
                let us = pulses[(k - ticks + window - 1) * columns + i]
                return (us, quantize(us))
            }
        }
    }

    /// This tick's trim of axis `axis`, in counts (−1, 0 or +1), to add to the count the
    /// output rounded `commandedMicroseconds` to (`quantizedMicroseconds`, a whole count).
    /// Call once per tick for every trimmed axis, whatever it sends.
    public mutating func counts(axis: Int, commandedMicroseconds: Double, quantizedMicroseconds: Double) -> Int {
        guard axes.indices.contains(axis), var a = axes[axis] else { return 0 }
        a.tick += 1
        if !a.started {
            a.started = true
            a.lastCommanded = commandedMicroseconds
            a.model.angle = a.calibration.angle(forPulseMicroseconds: quantizedMicroseconds)
            a.model.rate = 0
        }
        let changed = commandedMicroseconds != a.lastCommanded
        a.lastCommanded = commandedMicroseconds
        var handled = false
        if let arrival = a.arrival {
            if a.tick <= arrival {
                handled = true
                a.moving = true
                if a.tick >= a.aheadFirst {
                    let slot = a.tick - a.aheadFirst
                    if commandedMicroseconds != a.aheadCommanded[slot] || quantizedMicroseconds != a.aheadQuantized[slot] {
                        // Not the planned frames: drop the plan, plan again once they stop.
                        a.arrival = nil
                        a.plan = nil
                    } else if a.tick == a.aheadFirst {
                        plan(&a, arrival: arrival, quantizedMicroseconds: a.aheadQuantized[arrival - a.aheadFirst])
                    }
                }
            } else {
                // The move arrived as announced: its plan plays on unless motion resumes.
                a.arrival = nil
                if !changed {
                    handled = true
                    a.moving = false
                }
            }
        }
        if !handled {
            if changed {
                a.moving = true
                a.plan = nil
            } else if a.moving {
                a.moving = false
                plan(&a, arrival: a.tick - 1, quantizedMicroseconds: quantizedMicroseconds)
            }
        }
        var k = 0
        if let p = a.plan {
            if (p.start..<p.end).contains(a.tick) { k = p.sign }
            if a.tick >= p.end - 1 { a.plan = nil }
        }
        a.model.step(horn: a.calibration.angle(forPulseMicroseconds: quantizedMicroseconds + Double(k) * countMicroseconds))
        axes[axis] = a
        return k
    }

    /// Drops every plan: the loop stalled and the output held its pulses meanwhile.
    public mutating func cancel() {
        for i in axes.indices where axes[i] != nil {
            axes[i]?.plan = nil
            axes[i]?.arrival = nil
            axes[i]?.moving = false
        }
    }

    /// Whether a pulse is planned or playing on any axis (motion the frames do not show).
    public var isTrimming: Bool { axes.contains { $0?.plan != nil } }

    /// Plans the pulse on axis `a` before this tick (`a.tick`, the earliest it may start):
    /// the frames stop changing after tick `arrival` (before this one: arrived already;
    /// else the expected pulses through `arrival` are `a.aheadQuantized`), on `q`.
    private func plan(_ a: inout AxisTrim, arrival: Int, quantizedMicroseconds q: Double) {
        let final = a.calibration.angle(forPulseMicroseconds: q)
        let w = a.omega
        let t0 = a.tick
        func amplitude(_ e: Double, _ v: Double) -> Double { (v * v + w * w * e * e).squareRoot() }
        // Each sign's count, degrees, where the trimmed pulse stays within the limits: on
        // the final pulse and on every expected one a pulse before the arrival may move.
        var steps: (up: Double?, down: Double?) = (nil, nil)
        var early = (up: true, down: true)
        for sign in stride(from: 1, through: -1, by: -2) {
            func allowed(_ pulse: Double) -> Bool {
                let angle = a.calibration.angle(forPulseMicroseconds: pulse)
                return a.pulseRange.contains(pulse) && angle >= a.softMin && angle <= a.softMax
            }
            let pulse = q + Double(sign) * countMicroseconds
            if allowed(pulse) {
                let step = a.calibration.angle(forPulseMicroseconds: pulse) - final
                if sign > 0 { steps.up = step } else { steps.down = step }
            }
            if arrival >= t0 {
                for t in t0...arrival where !allowed(a.aheadQuantized[t - a.aheadFirst] + Double(sign) * countMicroseconds) {
                    if sign > 0 { early.up = false } else { early.down = false }
                }
            }
        }
        // The untrimmed camera after tick `end`, relative to the final horn; a pulse over
        // ticks s..<s+width adds step × (R[end − s + 1] − R[end − s + 1 − width]).
        var base = a.model
        var t = t0
        while t <= arrival {
            base.step(horn: a.calibration.angle(forPulseMicroseconds: a.aheadQuantized[t - a.aheadFirst]))
            t += 1
        }
        var best: (start: Int, width: Int, sign: Int, left: Double)?
        // The pulse that leaves least of what the counts alone would leave by its end.
        var least: (start: Int, width: Int, sign: Int, ratio: Double)?
        let lastStart = arrival + a.span
        for end in max(arrival, t0)...(arrival + 2 * a.span) {
            if end > arrival { base.step(horn: final) }
            // The counts alone are still enough by now: no pulse would end sooner.
            let untrimmed = amplitude(base.angle - final, base.rate)
            if untrimmed <= goalDegreesPerSecond { return }
            if end < t0 { continue }
            for width in 1...a.span {
                // Pulses ending at `end`; at the arrival also those ending before it.
                let latest = end - width + 1
                let earliest = end == arrival ? max(t0, arrival - a.span) : latest
                let last = min(latest, lastStart)
                guard latest >= t0, earliest <= last else { continue }
                for s in earliest...last {
                    let k = end - s + 1
                    let e = a.stepAngle[k] - a.stepAngle[k - width]
                    let v = a.stepRate[k] - a.stepRate[k - width]
                    for sign in stride(from: 1, through: -1, by: -2) {
                        guard let step = sign > 0 ? steps.up : steps.down else { continue }
                        if s <= arrival, !(sign > 0 ? early.up : early.down) { continue }
                        let r = amplitude(base.angle - final + step * e, base.rate + step * v)
                        if r / untrimmed < least?.ratio ?? .infinity { least = (s, width, sign, r / untrimmed) }
                        if r <= goalDegreesPerSecond, r < best?.left ?? .infinity { best = (s, width, sign, r) }
                    }
                }
            }
            if best != nil { break }
        }
        if let pick = best {
            a.plan = Plan(start: pick.start, end: pick.start + pick.width, sign: pick.sign)
        } else if let pick = least, pick.ratio < 0.5 {
            a.plan = Plan(start: pick.start, end: pick.start + pick.width, sign: pick.sign)
        }
    }
}
