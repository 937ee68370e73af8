import Glibc

/// What `rig doctor` asks of the IMU: it answers as an MPU-6050, takes its configuration,
/// and its gyro reads small rates while the head stands still (a large one: the head is
/// moving, or the chip's offset is).
public struct MPU6050RestingReading: Sendable, Equatable {
    /// The samples read.
    public var samples: Int
    /// The largest rate any axis read, °/s.
    public var peakDps: Double
    /// Each axis's mean, °/s (the gyro's offset when the head is still).
    public var meanDps: SIMD3<Double>

    /// Above this at rest, doctor warns.
    public static let stillDps = 3.0

    public var isStill: Bool { peakDps <= Self.stillDps }
}

extension MPU6050 {
    /// Configures the chip (`configure`: WHO_AM_I first) and reads `samples` gyro samples,
    /// `pause` apart; leaves the bus closed.
    public func restingReading(samples: Int = 20, pause: () -> Void = { usleep(5000) }) throws(MPU6050Error) -> MPU6050RestingReading {
        defer { close() }
        try configure()
        var sum = SIMD3<Double>(repeating: 0)
        var peak = 0.0
        let count = max(1, samples)
        for index in 0..<count {
            if index > 0 { pause() }
            let rates = try readGyro()
            sum += rates
            peak = max(peak, abs(rates.x), abs(rates.y), abs(rates.z))
        }
        return MPU6050RestingReading(samples: count, peakDps: peak, meanDps: sum / Double(count))
    }
}
