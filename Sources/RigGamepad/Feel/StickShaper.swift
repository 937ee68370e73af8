import FoundationEssentials
import Glibc
import RigCore

/// Turns a stick's raw deflection into what the operator meant: a radial deadzone (so
/// a resting stick's noise moves nothing, in any direction), rescaled so motion starts
/// from zero at its edge; an expo curve for fine control near the centre; optionally
/// snapping to the stick's X or Y direction. A component smaller than a quarter of the
/// deadzone is dropped as well, so a full push along one axis does not creep the other
/// with the stick's centre offset. Pure.
public struct StickShaper: Sendable, Equatable {
    /// Radius of the deadzone, as a fraction of full deflection.
    public var deadzone: Double
    /// 0 linear … 1 cubic.
    public var expo: Double
    /// Within this many degrees of the X or Y direction, the other component is dropped.
    public var snapDegrees: Double

    public init(deadzone: Double, expo: Double, snapDegrees: Double = 0) {
        self.deadzone = min(max(deadzone, 0), 0.95)
        self.expo = min(max(expo, 0), 1)
        self.snapDegrees = min(max(snapDegrees, 0), 45)
    }

    /// The feel settings of `config`; the deadzone is at least the device's `flat`.
    public init(config: JogConfig, deviceFlatFraction: Double = 0) {
        self.init(deadzone: max(config.deadzone, deviceFlatFraction), expo: config.expo, snapDegrees: config.axisSnapDegrees)
    }

    /// Shapes one stick; both outputs lie in −1…1 and the magnitude is at most 1.
    @inline(__always)
    public func shape(x: Double, y: Double) -> (x: Double, y: Double) {
        let radius = (x * x + y * y).squareRoot()
        guard radius > deadzone, radius > 0 else { return (0, 0) }
        let scaled = (min(radius, 1) - deadzone) / (1 - deadzone)
        let curved = (1 - expo) * scaled + expo * scaled * scaled * scaled
        var ux = x / radius
        var uy = y / radius
        let axial = deadzone / 4
        if abs(x) < axial {
            ux = 0
            uy = uy < 0 ? -1 : 1
        } else if abs(y) < axial {
            uy = 0
            ux = ux < 0 ? -1 : 1
        }
        if snapDegrees > 0 {
            let angle = atan2(abs(uy), abs(ux)) * 180 / Double.pi
            if angle < snapDegrees {
                ux = ux < 0 ? -1 : 1
                uy = 0
            } else if angle > 90 - snapDegrees {
                uy = uy < 0 ? -1 : 1
                ux = 0
            }
        }
        return (ux * curved, uy * curved)
    }
}
