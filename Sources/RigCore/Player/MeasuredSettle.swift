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
/// threshold for `holdSeconds` without a break. Pure; fed once per measurement.
public struct StillnessDetector: Sendable, Equatable {
    public let thresholdDegreesPerSecond: Double
    public let holdSeconds: Double
    /// Seconds the rate has stayed below the threshold (0 after any sample above it).
    public private(set) var quietSeconds = 0.0
    /// The largest rate seen since the last `reset` (for the log).
    public private(set) var peakDegreesPerSecond = 0.0

    public init(thresholdDegreesPerSecond: Double, holdSeconds: Double) {
        self.thresholdDegreesPerSecond = thresholdDegreesPerSecond
        self.holdSeconds = holdSeconds
    }

    public init(_ settle: MeasuredSettle) {
        self.init(thresholdDegreesPerSecond: settle.thresholdDegreesPerSecond, holdSeconds: settle.holdSeconds)
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
        return isStill
    }

    public var isStill: Bool { quietSeconds >= holdSeconds && quietSeconds > 0 }

    public mutating func reset() {
        quietSeconds = 0
        peakDegreesPerSecond = 0
    }
}
