import RigCore

/// Measures how fast the camera turns, for a measured settle (`MeasuredSettle`): an IMU on
/// the camera, the live view's frames, or the simulator's payload. The control loop reads
/// it once per tick after the output's write, on the loop thread: no allocation, no long
/// blocking.
public protocol StillnessProbe: AnyObject {
    /// The camera's angular rate now, degrees per second (its magnitude); nil when there is
    /// no reading (a failed read counts as motion).
    func rateDegreesPerSecond() -> Double?
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
