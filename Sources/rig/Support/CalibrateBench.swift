import FoundationEssentials
import Glibc
import RigCore
import RigFormat
import RigRuntime

/// `rig bench calibrate`'s simulation: `rig calibrate servo`'s calibrator driven by a
/// scripted user against a simulated servo whose real angle ↔ pulse curve is hidden from it
/// (non-linear), in virtual time. The servo is the simulator's whole chain (the pulse
/// quantized to a PCA9685's 12-bit counts at 50 Hz, its deadband, its slew); the user
/// approaches every point from below, waits for the horn to stop, reads the angle to 0.1°
/// (a protractor) and types it; then finds the deadband by reversing and stepping 1 µs at
/// a time until the horn moves.
enum CalibrateBench {
    /// The servo's real curve: 190° over about 2200 µs, steeper in the middle.
    static func hiddenAngle(pulse: Double) -> Double {
        100 * sin((pulse - 1500) / 1100 * 1.1) / sin(1.1) + 3
    }

    struct Figures {
        var points: Int
        /// The calibrated pulse range (the user's span).
        var span: ClosedRange<Double>
        /// Largest |table − truth| over the span, 1 µs apart.
        var worstErrorDegrees: Double
        var meanErrorDegrees: Double
        /// The deadband the search found, µs, and in degrees on the truth's slope there.
        var deadbandMicroseconds: Double?
        var deadbandDegrees: Double?
        /// Every pulse the servo was sent lay in the range shown.
        var stayedInRange: Bool
    }

    /// - Parameters:
    ///   - stepMicroseconds: pulses between points (a multiple of 50: coarse steps).
    ///   - deadbandDegrees: the simulated servo's deadband.
    static func run(stepMicroseconds: Double, deadbandDegrees: Double, span: ClosedRange<Double> = 900...2100) throws -> Figures {
        // The simulated servo: the hidden curve as a dense table (10 µs apart).
        let table = stride(from: ServoCalibrator.pulseLimits.lowerBound, through: ServoCalibrator.pulseLimits.upperBound, by: 10).map {
            (angleDeg: hiddenAngle(pulse: $0), pulseMicroseconds: $0)
        }
        let truth = try Calibration.make(points: table, inverted: false).get()
        var axis = Axis(
            name: "pan", kind: .servo, channel: 0, calibration: truth, home: hiddenAngle(pulse: 1500), park: nil, softMin: truth.angleRange.lowerBound,
            softMax: truth.angleRange.upperBound, maxVelocity: 90, maxAcceleration: 180, idle: .hold)
        // A deadband (even 0) and the PCA9685 counts: the whole chain is simulated.
        axis.servo = ServoImperfection(deadbandDeg: deadbandDegrees)
        axis.payload = Payload(frequencyHz: 8, damping: 0.3)
        let rig = Rig(name: "bench", axes: [axis], output: .sim)
        let servo = SimOutput(config: SimOutputConfig(), rig: rig)
        try servo.start(channels: [OutputChannel(axis)], initial: [.pulse(microseconds: 1500)])
        var sent = [Double.nan]
        var stayed = true
        var calibrator = ServoCalibrator(startMicroseconds: 1500)
        /// Holds the pulse until the horn stops; returns where it stopped.
        func hold() throws -> Double {
            var last = servo.hornPositions[0]
            var still = 0
            for _ in 0..<1000 {
                try servo.write([.pulse(microseconds: calibrator.pulseMicroseconds)], sent: &sent)
                if !calibrator.window.contains(sent[0].rounded()) && abs(sent[0] - calibrator.pulseMicroseconds) > 2.5 { stayed = false }
                let now = servo.hornPositions[0]
                still = abs(now - last) < 1e-9 ? still + 1 : 0
                last = now
                if still >= 20 { break }
            }
            return last
        }
        func press(_ key: ServoCalibrator.Key) throws {
            if case .move(let pulse) = calibrator.handle(key), !calibrator.window.contains(pulse) { stayed = false }
            _ = try hold()
        }
        while calibrator.window.lowerBound > span.lowerBound || calibrator.window.upperBound < span.upperBound { try press(.widen) }
        // From below the span, so the first point is approached upwards too.
        while calibrator.pulseMicroseconds > span.lowerBound - ServoCalibrator.coarseStepMicroseconds,
            calibrator.pulseMicroseconds > calibrator.window.lowerBound
        {
            try press(.step(-ServoCalibrator.coarseStepMicroseconds))
        }
        var pulse = span.lowerBound
        while pulse <= span.upperBound {
            while calibrator.pulseMicroseconds < pulse { try press(.step(min(ServoCalibrator.coarseStepMicroseconds, pulse - calibrator.pulseMicroseconds))) }
            let reading = (try hold() * 10).rounded() / 10
            _ = calibrator.handle(.typeAngle)
            for c in format(reading) { _ = calibrator.handle(.text(c)) }
            _ = calibrator.handle(.enter)
            pulse += stepMicroseconds
        }
        // The deadband: reverse from a point reached upwards, 1 µs at a time until it moves.
        let rest = try hold()
        _ = calibrator.handle(.deadband)
        for _ in 0..<200 {
            try press(.step(-1))
            if abs(servo.hornPositions[0] - rest) > 1e-6 { break }
        }
        _ = calibrator.handle(.deadband)
        guard case .success(let result) = calibrator.calibration() else { throw CalibrationProblem.notMonotonic }
        let errors = stride(from: span.lowerBound, through: span.upperBound, by: 1).map { abs(result.angle(forPulseMicroseconds: $0) - hiddenAngle(pulse: $0)) }
        let slope = abs(hiddenAngle(pulse: calibrator.pulseMicroseconds + 0.5) - hiddenAngle(pulse: calibrator.pulseMicroseconds - 0.5))
        return Figures(
            points: result.angles.count, span: span, worstErrorDegrees: errors.max() ?? .infinity, meanErrorDegrees: errors.reduce(0, +) / Double(errors.count),
            deadbandMicroseconds: calibrator.deadbandMicroseconds, deadbandDegrees: calibrator.deadbandMicroseconds.map { $0 * slope }, stayedInRange: stayed)
    }
}
