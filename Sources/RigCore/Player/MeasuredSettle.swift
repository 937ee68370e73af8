import FoundationEssentials
import Glibc
import RigFormat

/// How a step's shot waits for the head to be still (`"settle"` in the rig file): measured
/// (an IMU on the camera, the live view's frames, the simulator's payload) instead of a
/// guessed `settleSeconds`, with a timeout after which the fixed settle applies.
public struct MeasuredSettle: Sendable, Equatable {
    public enum Sensor: String, Sendable, Equatable, CaseIterable {
        /// An MPU-6050-class gyro on the rig's I2C bus.
        case imu
        /// Motion between the camera's live-view frames.
        case liveView
        /// The simulated output's payload (the sim rig's own camera).
        case sim
    }

    public var sensor: Sensor
    /// Still: the camera turns slower than this, degrees per second …
    public var thresholdDegreesPerSecond = 0.5
    /// … for this long without a break.
    public var holdSeconds = 0.1
    /// Not still this long after the move: the step's fixed `settleSeconds` applies (counted
    /// from the move's end) and the log says so.
    public var timeoutSeconds = 3.0
    /// The live view's horizontal field of view (`"fovDeg"`, `"liveView"` only): nil, the
    /// camera's own (the simulated camera's lens) or the panorama's lens.
    public var fieldOfViewDegrees: Double?

    public static let thresholdRange: ClosedRange<Double> = 0.001...100
    public static let holdRangeSeconds: ClosedRange<Double> = 0...5
    public static let timeoutRangeSeconds: ClosedRange<Double> = 0.05...600
    public static let fieldOfViewRange: ClosedRange<Double> = 1...179

    public init(sensor: Sensor) {
        self.sensor = sensor
    }

    /// A settle sized to a payload: held over half its ringing period (a shorter hold can
    /// fall between two peaks whose rate is still above the threshold), at least 0.05 s;
    /// timed out after a ringing of `countDegrees` (one output count's step, what a move's
    /// last count leaves) has fallen below the threshold, whole seconds up.
    public static func sized(sensor: Sensor, payload: Payload, countDegrees: Double, thresholdDegreesPerSecond: Double = 0.5) -> MeasuredSettle {
        var settle = MeasuredSettle(sensor: sensor)
        settle.thresholdDegreesPerSecond = thresholdDegreesPerSecond
        settle.holdSeconds = min(max(0.05, (payload.dampedPeriodSeconds / 2 * 100).rounded(.up) / 100), holdRangeSeconds.upperBound)
        let ring = payload.ringDownSeconds(amplitudeDegrees: countDegrees, belowDegreesPerSecond: thresholdDegreesPerSecond)
        settle.timeoutSeconds = min(max(ring.rounded(.up), timeoutRangeSeconds.lowerBound), timeoutRangeSeconds.upperBound)
        return settle
    }

    public static func parse(_ value: ValueReader) throws(FileError) -> MeasuredSettle {
        let object = try value.object()
        let sensorName = try object.required("sensor", "\"imu\", \"liveView\" or \"sim\"").oneOf(Sensor.allCases.map(\.rawValue))
        let sensor = Sensor(rawValue: sensorName) ?? .sim
        var settle = MeasuredSettle(sensor: sensor)
        if let v = object.optional("thresholdDegPerS") { settle.thresholdDegreesPerSecond = try v.number(in: thresholdRange, unit: "°/s") }
        if let v = object.optional("holdSeconds") { settle.holdSeconds = try v.number(in: holdRangeSeconds, unit: "s") }
        if let v = object.optional("timeoutSeconds") { settle.timeoutSeconds = try v.number(in: timeoutRangeSeconds, unit: "s") }
        if let v = object.optional("fovDeg") {
            guard settle.sensor == .liveView else { throw v.error("\"fovDeg\" is for \"sensor\": \"liveView\" (the live view's field of view)") }
            settle.fieldOfViewDegrees = try v.number(in: fieldOfViewRange, unit: "°")
        }
        try object.finish()
        return settle
    }
}

/// Decides "still" from a stream of measured angular rates: every rate below the
/// threshold for `holdSeconds` without a break; or, with the ringing's frequency known
/// (`init(_:rig:)`), the ringing's envelope below it (`RingingEnvelope`, bounded from
/// readings a quarter period apart) for a few readings since the last commanded motion.
/// Pure; fed once per measurement.
public struct StillnessDetector: Sendable, Equatable {
    public let thresholdDegreesPerSecond: Double
    public let holdSeconds: Double
    /// Seconds the rate has stayed below the threshold (0 after any sample above it).
    public private(set) var quietSeconds = 0.0
    /// The largest rate seen since the last `reset` (for the log).
    public private(set) var peakDegreesPerSecond = 0.0
    /// The envelope's verdict replaces the hold when the ringing's frequency is known.
    public private(set) var envelope: RingingEnvelope?
    /// Readings in a row whose envelope was below the threshold, and how many it takes.
    private var envelopeQuiet = 0
    private let envelopeHold: Int
    /// `commanded(sent:framesMoving:)`'s last pulses, the ticks since one changed, and how
    /// many ticks after a change the servo may still be answering it.
    private var lastSent: [Double] = []
    private var sinceSentChange = Int.max
    private var answerTicks = 1

    public init(thresholdDegreesPerSecond: Double, holdSeconds: Double, envelope: RingingEnvelope? = nil) {
        self.thresholdDegreesPerSecond = thresholdDegreesPerSecond
        self.holdSeconds = holdSeconds
        self.envelope = envelope
        // A few readings (an eighth of the quarter period, at least 2): one noisy low
        // reading pair is not enough.
        envelopeHold = max(2, (envelope?.lag ?? 0) / 4)
    }

    public init(_ settle: MeasuredSettle) {
        self.init(thresholdDegreesPerSecond: settle.thresholdDegreesPerSecond, holdSeconds: settle.holdSeconds)
    }

    /// The detector the loop runs for `rig`'s settle: by the envelope when the rig knows
    /// the ringing's frequency (`Rig.settleRingingHz`, read once a tick), else by the hold.
    /// `pwmPeriodSeconds`: how long a pulse written may wait to be latched (the output's
    /// PWM period), for `commanded(sent:framesMoving:)`.
    public init(_ settle: MeasuredSettle, rig: Rig, pwmPeriodSeconds: Double = 0) {
        let envelope = rig.settleRingingHz(settle).flatMap { RingingEnvelope(frequencyHz: $0, sampleSeconds: rig.tickSeconds) }
        self.init(thresholdDegreesPerSecond: settle.thresholdDegreesPerSecond, holdSeconds: settle.holdSeconds, envelope: envelope)
        lastSent = rig.axes.map { _ in Double.nan }
        // A pulse is latched up to a PWM period after it is written, and the servo answers
        // its lag later (`lagSeconds`, 0 unless the file says), one tick more for its own loop.
        let latch = Int((max(pwmPeriodSeconds, 0) / rig.tickSeconds - 1e-9).rounded(.up))
        let lag = rig.axes.map { Int(($0.servo.lagSeconds / rig.tickSeconds).rounded(.up)) }.max() ?? 0
        answerTicks = max(latch, 1) + lag
    }

    /// One measurement: the rate magnitude (°/s) over the `seconds` since the last one.
    /// A NaN (no reading) breaks the quiet like motion does.
    @discardableResult
    public mutating func observe(rateDegreesPerSecond rate: Double, seconds: Double) -> Bool {
        let magnitude = abs(rate)
        peakDegreesPerSecond = max(peakDegreesPerSecond, magnitude.isNaN ? 0 : magnitude)
        if magnitude < thresholdDegreesPerSecond {
            quietSeconds += seconds
        } else {
            quietSeconds = 0
        }
        if envelope != nil {
            let bound = envelope?.push(magnitude) ?? .infinity
            envelopeQuiet = bound < thresholdDegreesPerSecond ? envelopeQuiet + 1 : 0
        }
        return isStill
    }

    /// Whether motion is commanded this tick (told before `observe`): the envelope holds
    /// only over free ringing, so it starts again after the last commanded motion.
    public mutating func commanded(moving: Bool) {
        guard moving, envelope != nil else { return }
        envelope?.clear()
        envelopeQuiet = 0
    }

    /// Motion as the output sent it (told before `observe`, instead of `commanded(moving:)`):
    /// the envelope starts again after the last tick whose pulses (`sent`, per axis: what
    /// the output programmed, its counts) changed, and the servo's answer to it (a latch
    /// period and its lag) — not after the last frame change: a shaped move's last frames
    /// stay within one count, and the servo cannot move the camera on a count it was not
    /// sent. A NaN (nothing sent, nothing known) leaves it to `framesMoving`.
    public mutating func commanded(sent: [Double], framesMoving: Bool) {
        var changed = false
        var known = sent.count == lastSent.count
        for i in sent.indices where i < lastSent.count {
            if sent[i].isNaN { known = false } else if sent[i] != lastSent[i] { changed = true }
            lastSent[i] = sent[i]
        }
        if changed { sinceSentChange = 0 } else if sinceSentChange < Int.max { sinceSentChange += 1 }
        commanded(moving: known ? sinceSentChange <= answerTicks : framesMoving)
    }

    public var isStill: Bool {
        if envelope != nil { return envelopeQuiet >= envelopeHold }
        return quietSeconds >= holdSeconds && quietSeconds > 0
    }

    public mutating func reset() {
        quietSeconds = 0
        peakDegreesPerSecond = 0
        envelope?.clear()
        envelopeQuiet = 0
    }
}

extension Rig {
    /// The one frequency `settle` may take the head to ring at, for its envelope verdict:
    /// the shaped axes' shapers' (the one the resonance calibration writes), when they
    /// agree within 1 % and the sensor reads every tick (an IMU, the simulator; not the
    /// live view, whose frames come at their own times); nil otherwise (the hold decides).
    public func settleRingingHz(_ settle: MeasuredSettle) -> Double? {
        guard settle.sensor != .liveView else { return nil }
        let frequencies = axes.compactMap { $0.shaper?.frequencyHz }
        guard let low = frequencies.min(), let high = frequencies.max(), high <= low * 1.01 else { return nil }
        return low
    }
}

/// The envelope of a ringing rate, bounded from two of its magnitudes about a quarter of the
/// ringing period apart: a rate that rings at ω is u·cos ωt + w·sin ωt (each a vector over the
/// sensor's axes), and two readings δ = ω·lag apart fix |u|² + |w|² ≤ (m₁² + m₂² +
/// 2·m₁·m₂·|cos δ|) / sin²δ whatever their signs, a bound on every rate the ringing reaches
/// from then on (its decay only lowers it; the older reading is the larger for it). The
/// frequency may be off by `tolerance` either way: the bound is the larger at the two ends
/// of δ's range. A noisy sensor can read a magnitude below the true one: each reading is
/// taken `noiseMargin` × the noise seen in the window (its second differences, which a
/// ringing sampled several times a period hardly has) higher. Valid only over free ringing:
/// `clear()` on every commanded motion. Pure; its ring is sized at init (the loop thread
/// allocates nothing).
public struct RingingEnvelope: Sendable, Equatable {
    /// Readings between the two (about a quarter of the period).
    public let lag: Int
    private let cosLow: Double
    private let sinLow: Double
    private let cosHigh: Double
    private let sinHigh: Double
    private var ring: [Double]
    private var newest = 0
    /// Readings are raised by this many times the noise's estimated σ.
    public static let noiseMargin = 3.0
    /// Readings since the last `clear()`, up to `lag + 1`.
    private var filled = 0

    /// The ringing at `frequencyHz` (known within `tolerance`), read every `sampleSeconds`;
    /// nil when the readings are too sparse for it (fewer than about 6 a period).
    public init?(frequencyHz: Double, sampleSeconds: Double, tolerance: Double = 0.25) {
        guard frequencyHz > 0, sampleSeconds > 0, (0..<0.5).contains(tolerance) else { return nil }
        let lag = Int((1 / (4 * frequencyHz * sampleSeconds)).rounded())
        // At least three readings in the window, for the noise's estimate.
        guard lag >= 2 else { return nil }
        let delta = 2 * Double.pi * frequencyHz * Double(lag) * sampleSeconds
        let low = delta * (1 - tolerance)
        let high = delta * (1 + tolerance)
        // Both ends well inside (0, π): near 0 or π two readings say nothing of the other phase.
        guard low > 0.1 * Double.pi, high < 0.9 * Double.pi else { return nil }
        self.lag = lag
        cosLow = abs(cos(low))
        sinLow = sin(low)
        cosHigh = abs(cos(high))
        sinHigh = sin(high)
        ring = [Double](repeating: 0, count: lag + 1)
    }

    /// One reading (a rate's magnitude, °/s); returns the envelope's bound, or +∞ until a
    /// quarter period of readings has come since the last `clear()`. A NaN clears.
    @discardableResult
    public mutating func push(_ magnitude: Double) -> Double {
        guard !magnitude.isNaN else {
            clear()
            return .infinity
        }
        newest = newest + 1 == ring.count ? 0 : newest + 1
        ring[newest] = abs(magnitude)
        filled = min(filled + 1, ring.count)
        guard filled == ring.count else { return .infinity }
        var oldest = newest - lag
        if oldest < 0 { oldest += ring.count }
        // The noise: the window's second differences (σ√6 each for white noise).
        var sum = 0.0
        for k in 2...lag {
            var a = oldest + k
            if a >= ring.count { a -= ring.count }
            var b = a - 1
            if b < 0 { b += ring.count }
            var c = b - 1
            if c < 0 { c += ring.count }
            let d = ring[a] - 2 * ring[b] + ring[c]
            sum += d * d
        }
        let margin = Self.noiseMargin * (sum / (6 * Double(lag - 1))).squareRoot()
        let m1 = ring[newest] + margin
        let m2 = ring[oldest] + margin
        func bound(_ c: Double, _ s: Double) -> Double { (m1 * m1 + m2 * m2 + 2 * m1 * m2 * c).squareRoot() / s }
        return max(bound(cosLow, sinLow), bound(cosHigh, sinHigh))
    }

    /// Motion was commanded (or nothing was read): the readings so far are not free ringing.
    public mutating func clear() { filled = 0 }
}
