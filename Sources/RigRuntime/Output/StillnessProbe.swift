import Glibc
import RigCore
import RigFormat

/// Measures how fast the camera turns, for a measured settle (`MeasuredSettle`): an IMU on
/// the camera, the live view's frames (`LiveViewMotion`), or the simulator's payload. The control loop reads
/// it once per tick after the output's write, on the loop thread: no allocation, no long
/// blocking.
public protocol StillnessProbe: AnyObject {
    /// The camera's angular rate now, degrees per second (its magnitude); nil when there is
    /// no reading (a failed read counts as motion).
    func rateDegreesPerSecond() -> Double?
    /// Opens it before the output starts (a sensor that does not answer refuses the run,
    /// nothing moved); what it measures, for the log. A probe that is a session part (the
    /// live view) starts as one instead. Default: nothing to open.
    func startMeasuring() throws(PartStartFailure) -> String?
    /// Closes what `startMeasuring` opened, after the loop ended.
    func stopMeasuring()
    /// Told by the loop each tick, before `rateDegreesPerSecond`, whether it commands
    /// motion (a sensor whose readings come late, the live view, ignores readings from
    /// before the rig stopped). No allocation.
    func commanded(moving: Bool)
}

extension StillnessProbe {
    public func startMeasuring() throws(PartStartFailure) -> String? { nil }
    public func stopMeasuring() {}
    public func commanded(moving: Bool) {}
}

/// A measured settle from a `RateSensor` (an IMU's gyro on the camera): the magnitude of the
/// three rates less the gyro's own offset, which `start` measures while the head stands
/// still before the run (an MPU-6050's is a few °/s, above a settle's threshold).
public final class RateSensorStillness: StillnessProbe {
    public let sensor: RateSensor
    /// The offset subtracted, °/s per component (measured by `start`).
    public private(set) var offset = SIMD3<Double>(repeating: 0)
    private let offsetSamples: Int
    private let pause: () -> Void

    /// - Parameters:
    ///   - offsetSamples: readings averaged at the start for the offset;
    ///   - pause: between them (the chip's next sample).
    public init(sensor: RateSensor, offsetSamples: Int = 50, pause: @escaping () -> Void = { usleep(2000) }) {
        self.sensor = sensor
        self.offsetSamples = max(1, offsetSamples)
        self.pause = pause
    }

    public func startMeasuring() throws(PartStartFailure) -> String? {
        try sensor.start()
        var sum = SIMD3<Double>(repeating: 0)
        var low = SIMD3<Double>(repeating: .infinity)
        var high = SIMD3<Double>(repeating: -.infinity)
        var read = 0
        for index in 0..<offsetSamples {
            if index > 0 { pause() }
            guard let rates = sensor.rates() else { continue }
            sum += rates
            low = pointwiseMin(low, rates)
            high = pointwiseMax(high, rates)
            read += 1
        }
        guard read * 2 >= offsetSamples else {
            sensor.close()
            throw PartStartFailure(
                part: "imu", cause: .unavailable, detail: "\(sensor.sensorName): only \(read) of \(offsetSamples) readings answered; check its wiring")
        }
        offset = sum / Double(read)
        let spread = (high - low).max()
        let said =
            "measured settle: \(sensor.sensorName), its offset (\(fixed(offset.x, 2)), \(fixed(offset.y, 2)), \(fixed(offset.z, 2))) °/s subtracted"
        // Read over ~0.1 s before anything moved: a wide spread is a head that was not still
        // (wind, a hand) and an offset that may be off.
        return spread > 2 ? said + "; warning: it read \(fixed(spread, 1)) °/s apart while the rig stood still (moved?), so the offset may be off" : said
    }

    /// The loop thread: one reading (an MPU-6050's is tried twice before it counts as missing).
    public func rateDegreesPerSecond() -> Double? {
        guard let rates = sensor.rates() else { return nil }
        let d = rates - offset
        return (d * d).sum().squareRoot()
    }

    public func stopMeasuring() { sensor.close() }
}

extension SimOutput: StillnessProbe {
    /// The simulated camera's angular rate: the payloads' rates combined (√Σ rate²).
    public func rateDegreesPerSecond() -> Double? {
        var sum = 0.0
        for i in 0..<axisCount {
            let rate = modelledCameraRate(axis: i)
            sum += rate * rate
        }
        return sum.squareRoot()
    }
}

/// The camera's angular rate by sensor axis, signed, degrees per second: an IMU's gyro
/// (x, y, z), the live view's motion (`LiveViewMotion`: across and up the view), or the
/// simulator's payload. `rig calibrate resonance` records it through a
/// `RateRecorder`, read by the loop once per tick after the output's write, on the loop
/// thread (no allocation, no long blocking).
public protocol RateSensor: AnyObject {
    /// What it is, for the screen ("MPU-6050 at 0x68 on /dev/i2c-1").
    var sensorName: String { get }
    /// Opens and configures it, before the loop runs: a sensor that does not answer fails here.
    func start() throws(PartStartFailure)
    /// What to call each component on the screen ("gyro x", …).
    var componentNames: [String] { get }
    /// The rates now; nil when the reading failed.
    func rates() -> SIMD3<Double>?
    /// Closes it (after the loop ended).
    func close()
    /// How old a reading may be (the live view's: about two frames): a ring-down is
    /// recorded from this long after the move's end.
    var lagSeconds: Double { get }
}

extension RateSensor {
    public var lagSeconds: Double { 0 }
}

/// The simulated payload as a rate sensor: axis `axis`'s camera rate as its x (a
/// demonstration without an IMU: the simulator's own motion, exact but for its model).
public final class SimRateSensor: RateSensor {
    private let output: SimOutput
    private let axis: Int
    public init(output: SimOutput, axis: Int) {
        self.output = output
        self.axis = axis
    }
    public var sensorName: String { "the simulated payload's own motion (no IMU)" }
    public var componentNames: [String] { ["the simulated camera", "-", "-"] }
    public func start() throws(PartStartFailure) {}
    public func rates() -> SIMD3<Double>? { SIMD3(output.modelledCameraRate(axis: axis), 0, 0) }
    public func close() {}
}

/// One tick's reading: the loop's time, where the loop sent the recorded axis, the rates
/// (NaN when the reading failed).
public struct RateSample: Sendable, Equatable {
    public var timeSeconds: Double
    public var position: Double
    public var rates: SIMD3<Double>
}

extension RateSample {
    /// `samples`' rates on the loop's tick grid, by their times: the ticks a stall of the
    /// loop missed are gaps (NaN, for `RingDown.bridged`), not time squeezed out of a
    /// ring-down (which then rings faster: 3.18 Hz for 3 on a loaded machine).
    public static func onTickGrid(_ samples: [RateSample], tickSeconds: Double) -> [SIMD3<Double>] {
        guard let first = samples.first?.timeSeconds, let last = samples.last?.timeSeconds, last >= first, tickSeconds > 0 else { return [] }
        var grid = [SIMD3<Double>](repeating: SIMD3(repeating: .nan), count: Int(((last - first) / tickSeconds).rounded()) + 1)
        for sample in samples {
            let index = Int(((sample.timeSeconds - first) / tickSeconds).rounded())
            if grid.indices.contains(index) { grid[index] = sample.rates }
        }
        return grid
    }
}

/// Records a `RateSensor` once per loop tick, on the loop thread, into a ring another
/// thread drains (`rig calibrate resonance`).
public final class RateRecorder: @unchecked Sendable {
    public let sensor: RateSensor
    /// The axis whose commanded position each sample carries.
    public let axis: Int
    public let samples = SPSCRing<RateSample>(capacity: 8192)

    public init(sensor: RateSensor, axis: Int) {
        self.sensor = sensor
        self.axis = axis
    }

    /// The loop thread, after the output's write.
    @inline(__always)
    func record(timeSeconds: Double, positions: [Double]) {
        let rates = sensor.rates() ?? SIMD3(repeating: .nan)
        _ = samples.push(RateSample(timeSeconds: timeSeconds, position: positions[axis], rates: rates))
    }
}
