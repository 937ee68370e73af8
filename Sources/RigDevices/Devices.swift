import RigCore
import RigDFMoco
import RigFormat
import RigGamepad
import RigGroup
import RigPCA9685
import RigRuntime
import RigStepSync

/// The composition root for a rig's devices: each driver reads its own section of the rig
/// file (`OutputDrivers`, `StepSyncConfig`, `ButtonsConfig`, `DFMocoConfig`, `JogConfig`, `CameraBackends`, `GroupConfig`, `MPU6050Config`). Every command that loads a rig, and the
/// tests that pin what `rig check` prints, go through `check` before anything opens.
public enum Devices {
    /// Reads every device section with the driver that owns it; the first problem is a
    /// `FILE:LINE:COL` error, as for the rest of the file.
    public static func check(_ rig: Rig) throws(FileError) {
        try OutputDrivers.validate(rig)
        _ = try StepSyncConfig.parse(rig.stepSync)
        _ = try ButtonsConfig.parse(rig.buttons)
        _ = try DFMocoConfig.parse(rig.dfmoco, axes: rig.axes)
        _ = try JogConfig.parse(rig.jog, axes: rig.axes)
        try CameraBackends.validate(rig)
        _ = try GroupConfig.parse(rig.group)
        if let imu = rig.imu { _ = try MPU6050Config.parse(imu) }
    }

    /// What measures the rig file's measured settle, when it is not the output itself: the
    /// `"imu"` section's MPU-6050 for `"sensor": "imu"` (constructed here, opened by the
    /// session before anything moves). Nil for a simulated output: its own payload measures.
    public static func stillnessProbe(for rig: Rig) throws(FileError) -> StillnessProbe? {
        guard let settle = rig.settle, settle.sensor == .imu, rig.output.type != SimOutputConfig.type, let section = rig.imu else { return nil }
        return RateSensorStillness(sensor: MPU6050(config: try MPU6050Config.parse(section)))
    }
}
