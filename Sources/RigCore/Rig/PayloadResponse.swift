import FoundationEssentials
import Glibc

/// The payload's motion, one tick at a time: the camera angle θ follows the servo horn h
/// through a damped spring, θ'' = ω²(h − θ) − 2ζω·θ'. Stepped exactly for a horn that
/// holds still through each tick (the discrete state transition of the second-order
/// system), so it is stable and true at any tick length. Pure: the simulated output, the
/// simulated IMU and the benches share it.
public struct PayloadResponse: Sendable, Equatable {
    /// The camera's angle, degrees.
    public var angle: Double
    /// Its angular rate, degrees per second.
    public var rate = 0.0
    /// Its angular acceleration over the last step, degrees per second².
    public private(set) var acceleration = 0.0
    // The transition matrix over one tick, for the state (θ − h, θ').
    private let m00: Double
    private let m01: Double
    private let m10: Double
    private let m11: Double
    private let tickSeconds: Double

    public init(payload: Payload, tickSeconds dt: Double, angle: Double) {
        self.angle = angle
        tickSeconds = dt
        let w = 2 * Double.pi * payload.frequencyHz
        let z = min(payload.damping, 0.999)
        let wd = w * (1 - z * z).squareRoot()
        let sigma = z * w
        let decay = exp(-sigma * dt)
        let c = cos(wd * dt)
        let s = sin(wd * dt) / wd
        m00 = decay * (c + sigma * s)
        m01 = decay * s
        m10 = -decay * w * w * s
        m11 = decay * (c - sigma * s)
    }

    /// One tick with the horn at `horn` throughout.
    @inline(__always)
    public mutating func step(horn: Double) {
        let e = angle - horn
        let v = rate
        angle = horn + m00 * e + m01 * v
        let next = m10 * e + m11 * v
        acceleration = (next - rate) / tickSeconds
        rate = next
    }
}
