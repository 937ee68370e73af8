import RigCore

/// The rig's angles as stitchers read them.
///
/// The rig's convention (README, docs/stitching.md): **pan positive turns the camera to
/// the right** (clockwise seen from above) and **tilt positive looks up**; 0/0 looks
/// straight ahead at the horizon. Hugin (and Papywizard) measure yaw positive to the right
/// and pitch positive up, so the signs agree and only the range differs: yaw is wrapped
/// into −180…180°, pitch is the tilt. A head whose servo turns the other way is made to
/// follow the convention in the rig file (`"inverted": true`), never here.
public enum StitchAngles {
    /// Hugin's yaw for a pan position, in −180…180° (a pan of 190° is yaw −170°).
    public static func yaw(panDegrees pan: Double) -> Double {
        guard pan.isFinite else { return 0 }
        var yaw = pan.truncatingRemainder(dividingBy: 360)
        if yaw > 180 { yaw -= 360 }
        if yaw <= -180 { yaw += 360 }
        return yaw == 0 ? 0 : yaw  // no "-0" in the files
    }

    /// Hugin's pitch for a tilt position: the same angle, up positive.
    public static func pitch(tiltDegrees tilt: Double) -> Double {
        tilt.isFinite && tilt != 0 ? tilt : 0
    }
}
