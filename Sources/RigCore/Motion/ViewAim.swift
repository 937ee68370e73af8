import FoundationEssentials
import Glibc

/// Tap to aim: the pan and tilt that bring a point of the camera's view to its centre, for
/// a pan/tilt head (pan about the vertical, tilt about the camera's horizontal axis) and a
/// rectilinear lens — the same geometry the simulated camera draws its view with.
public enum ViewAim {
    /// - Parameters:
    ///   - x: across the view from its left edge, 0…1; `y`: down from its top edge, 0…1.
    ///   - horizontalFOVDegrees: the lens's horizontal field of view; `aspect`: the view's
    ///     width / height.
    /// - Returns: the pan (continuous with `panDegrees`) and tilt, in degrees.
    public static func target(
        panDegrees: Double, tiltDegrees: Double, x: Double, y: Double, horizontalFOVDegrees: Double, aspect: Double
    ) -> (pan: Double, tilt: Double) {
        let half = tan(horizontalFOVDegrees * .pi / 360)
        // The ray through the point, in the camera's frame (z ahead, x right, y up).
        let rx = (x - 0.5) * 2 * half
        let ry = (0.5 - y) * 2 * half / aspect
        let (sp, cp) = (sin(panDegrees * .pi / 180), cos(panDegrees * .pi / 180))
        let (st, ct) = (sin(tiltDegrees * .pi / 180), cos(tiltDegrees * .pi / 180))
        // Tilt about x, then pan about the vertical.
        let y1 = ry * ct + st
        let z1 = -ry * st + ct
        let x2 = rx * cp + z1 * sp
        let z2 = -rx * sp + z1 * cp
        var pan = atan2(x2, z2) * 180 / .pi
        pan += 360 * ((panDegrees - pan) / 360).rounded()
        let tilt = atan2(y1, (x2 * x2 + z2 * z2).squareRoot()) * 180 / .pi
        return (pan, tilt)
    }
}
