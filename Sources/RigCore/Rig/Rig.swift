import RigFormat
import RigSky

/// A rig: its axes, the output that drives them, and the loop rate.
public struct Rig: Sendable, Equatable {
    public var name: String
    public var axes: [Axis]
    public var output: OutputConfig
    public var loopRateHz: Double
    /// Gamepad jog feel and mapping (`"jog"`); nil: the standard layout.
    public var jog: ConfigSection?
    /// Cascable step sync settings (`"stepSync"`), read by RigStepSync's `StepSyncConfig`;
    /// nil: the defaults.
    public var stepSync: ConfigSection?
    /// GPIO buttons and LEDs (`"buttons"`), read by RigStepSync's `ButtonsConfig`; nil: the
    /// defaults.
    public var buttons: ConfigSection?
    /// Dragonframe's view of the rig (`"dfmoco"`), read by RigDFMoco's `DFMocoConfig`; nil:
    /// every axis, 100 steps per degree.
    public var dfmoco: ConfigSection?
    /// Its place in a group of rigs over MQTT (`"group"`: broker, name, credentials
    /// file), read by RigGroup's `GroupConfig`; nil: given on the command line.
    public var group: ConfigSection?
    /// The camera trigger (`"camera"`); nil: the rig fires no camera.
    public var camera: CameraConfig?
    /// Where the rig stands (`"site"`), for sky positions.
    public var site: Site?
    /// Shots wait until the head is measured still (`"settle"`); nil: each step's fixed
    /// `settleSeconds`.
    public var settle: MeasuredSettle?
    /// An IMU on the camera (`"imu"`: an MPU-6050 on an I2C bus), read by RigPCA9685's
    /// `MPU6050Config`; nil: none (`rig calibrate resonance` needs one on real hardware).
    public var imu: ConfigSection?

    public static let loopRateRangeHz: ClosedRange<Double> = 20...500
    public static let defaultLoopRateHz = 100.0

    public init(name: String, axes: [Axis], output: OutputConfig, loopRateHz: Double = Rig.defaultLoopRateHz) {
        self.name = name
        self.axes = axes
        self.output = output
        self.loopRateHz = loopRateHz
    }

    /// Seconds per tick.
    public var tickSeconds: Double { 1 / loopRateHz }

    public func axisIndex(named name: String) -> Int? {
        axes.firstIndex { $0.name == name }
    }

    public var homePose: [Double] { axes.map(\.home) }
}

extension Rig {
    /// What decides where a shot points, per axis in the rig's order: its channel and its
    /// angle ↔ pulse mapping (`"inverted"` flips it), as text a person can compare. A shot
    /// log records it (`rigPointing`) so `--resume` notices a rig that would now point the
    /// same steps elsewhere; speeds, limits and comments do not count.
    public var pointing: [AxisPointing] {
        axes.map { axis in
            var text = "\(axis.kind.rawValue) on channel \(axis.channel)"
            if let calibration = axis.calibration {
                text += ", "
                text += zip(calibration.angles, calibration.pulses).map { "\(format($0))° at \(format($1)) µs" }.joined(separator: ", ")
            }
            return AxisPointing(axis: axis.name, description: text)
        }
    }
}

/// One axis's entry in ``Rig/pointing``: its name and what decides where it points.
public struct AxisPointing: Sendable, Equatable {
    public var axis: String
    public var description: String

    public init(axis: String, description: String) {
        self.axis = axis
        self.description = description
    }
}
