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
/// pulses actually sent; on the first tick after a move's frames stop changing it plans the
/// pulse (its start within the next ringing period, its width up to a period, either sign)
/// that leaves the modelled ringing's rate amplitude below the goal and ends earliest,
/// failing that the one that leaves least if it halves what is there; a pulse of τ has a
/// response of amplitude 2·count·|sin(ωτ/2)|, its phase set by its start. Any new motion
/// cancels a plan.
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
/// `counts` allocates nothing (it runs on the loop thread).
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
        /// The camera (angle offset, rate) at the end of a pulse of 1° lasting `k + 1` ticks, from rest.
        var pulseEnd: [Double]
        var pulseEndRate: [Double]
        var span: Int
        var started = false
        var moving = false
        var lastCommanded = 0.0
        var tick = 0
        var plan: Plan?
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
            var pulse = PayloadResponse(payload: payload, tickSeconds: tickSeconds, angle: 0)
            var ends: [Double] = []
            var rates: [Double] = []
            for _ in 0..<span {
                pulse.step(horn: 1)
                // Relative to the horn back at 0 when the pulse ends.
                ends.append(pulse.angle)
                rates.append(pulse.rate)
            }
            return AxisTrim(
                calibration: calibration, softMin: axis.softMin, softMax: axis.softMax, pulseRange: low...high,
                omega: 2 * Double.pi * payload.frequencyHz, payload: payload,
                model: PayloadResponse(payload: payload, tickSeconds: tickSeconds, angle: 0), pulseEnd: ends, pulseEndRate: rates, span: span)
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
        if commandedMicroseconds != a.lastCommanded {
            a.lastCommanded = commandedMicroseconds
            a.moving = true
            a.plan = nil
        } else if a.moving {
            a.moving = false
            plan(&a, quantizedMicroseconds: quantizedMicroseconds)
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
            axes[i]?.moving = false
        }
    }

    /// Whether a pulse is planned or playing on any axis (motion the frames do not show).
    public var isTrimming: Bool { axes.contains { $0?.plan != nil } }

    private func plan(_ a: inout AxisTrim, quantizedMicroseconds q: Double) {
        let final = a.calibration.angle(forPulseMicroseconds: q)
        let w = a.omega
        func amplitude(_ e: Double, _ v: Double) -> Double { (v * v + w * w * e * e).squareRoot() }
        let left = amplitude(a.model.angle - final, a.model.rate)
        guard left > goalDegreesPerSecond else { return }
        // Each sign's count, degrees, where the trimmed pulse stays within the limits.
        var steps: (up: Double?, down: Double?) = (nil, nil)
        for sign in stride(from: 1, through: -1, by: -2) {
            let pulse = q + Double(sign) * countMicroseconds
            let angle = a.calibration.angle(forPulseMicroseconds: pulse)
            guard a.pulseRange.contains(pulse), angle >= a.softMin, angle <= a.softMax else { continue }
            if sign > 0 { steps.up = angle - final } else { steps.down = angle - final }
        }
        var best: (end: Int, width: Int, sign: Int, left: Double)?
        var least: (end: Int, width: Int, sign: Int, left: Double)?
        // The untrimmed camera `end` ticks from now, relative to the final horn.
        var base = a.model
        for end in 1...(2 * a.span) {
            base.step(horn: final)
            if best != nil { break }
            for width in 1...min(end, a.span) {
                for sign in stride(from: 1, through: -1, by: -2) {
                    guard let step = sign > 0 ? steps.up : steps.down else { continue }
                    let e = base.angle - final + step * a.pulseEnd[width - 1]
                    let v = base.rate + step * a.pulseEndRate[width - 1]
                    let r = amplitude(e, v)
                    if r < least?.left ?? .infinity { least = (end, width, sign, r) }
                    if r <= goalDegreesPerSecond, r < best?.left ?? .infinity { best = (end, width, sign, r) }
                }
            }
        }
        guard let pick = best ?? least.flatMap({ $0.left < left / 2 ? $0 : nil }) else { return }
        // This tick is tick `a.tick`; `end` ticks from now the pulse has ended.
        let start = a.tick + pick.end - pick.width
        a.plan = Plan(start: start, end: start + pick.width, sign: pick.sign)
    }
}
