import RigFormat

extension Rig {
    /// The rig as `rig calibrate servo` drives it: axis `index` measured in raw µs (its
    /// calibration the identity over `ServoCalibrator.pulseLimits`, its soft limits those
    /// limits, home `startMicroseconds`, no park, shaper or payload), its speed, acceleration
    /// and jerk carried over through the steepest µs per degree of its calibration; every
    /// other axis as it is, holding where it starts. Moves between raw pulses then go through
    /// the same loop, limiter and output as any other move.
    public func rawPulse(axis index: Int, startMicroseconds: Double) -> Rig {
        var rig = self
        let axis = axes[index]
        let limits = ServoCalibrator.pulseLimits
        // The identity is two valid points: this cannot fail.
        guard
            case .success(let identity) = Calibration.make(
                points: [(limits.lowerBound, limits.lowerBound), (limits.upperBound, limits.upperBound)], inverted: false)
        else { return rig }
        var microsecondsPerDegree = 1000.0 / 180
        if let c = axis.calibration {
            microsecondsPerDegree =
                zip(zip(c.angles, c.angles.dropFirst()), zip(c.pulses, c.pulses.dropFirst()))
                .map { a, p in abs((p.1 - p.0) / (a.1 - a.0)) }.max() ?? microsecondsPerDegree
        }
        var raw = Axis(
            name: axis.name, kind: .servo, channel: axis.channel, calibration: identity,
            home: min(max(startMicroseconds, limits.lowerBound), limits.upperBound), park: nil,
            softMin: limits.lowerBound, softMax: limits.upperBound,
            maxVelocity: axis.maxVelocity * microsecondsPerDegree, maxAcceleration: axis.maxAcceleration * microsecondsPerDegree,
            maxJerk: axis.maxJerk * microsecondsPerDegree, idle: axis.idle)
        raw.backlashDeg = 0
        rig.axes[index] = raw
        rig.settle = nil
        rig.camera = nil
        return rig
    }
}
