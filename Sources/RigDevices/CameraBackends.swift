import Logging
import RigCore
import RigFormat
import RigGPhoto2
import RigRuntime
import RigStepSync

/// The camera backends this build knows, each owning its config section: the one place a
/// new camera type is added. `rig check` (and every command that loads a rig) validates
/// the section through here before anything opens.
public enum CameraBackends {
    public static let types = [SimCamera.type, GPIOCameraConfig.type, GPhoto2CameraConfig.type]

    /// Parses the rig's camera section with its backend (`FILE:LINE:COL` errors).
    public static func validate(_ rig: Rig) throws(FileError) {
        guard let camera = rig.camera else { return }
        switch camera.type {
        case SimCamera.type: try SimCamera.checkConfig(camera)
        case GPIOCameraConfig.type: _ = try GPIOCameraConfig.parse(camera, buttons: ButtonsConfig.parse(rig.buttons))
        case GPhoto2CameraConfig.type: _ = try GPhoto2CameraConfig.parse(camera)
        default:
            let at = camera.section.reader.member("type") ?? camera.section.reader
            throw at.error("\"\(elided(camera.type))\" is not a camera type; valid: \(quotedList(types))")
        }
    }

    /// True when the camera reports each shot's end (the player holds until it does);
    /// false when the player times the shot itself (the simulator).
    public static func reportsShotDone(_ camera: CameraConfig) -> Bool {
        camera.type != SimCamera.type
    }

    /// True when the camera can be set (exposure, brackets).
    public static func takesSettings(_ camera: CameraConfig) -> Bool {
        camera.type == GPhoto2CameraConfig.type
    }

    /// Why the camera cannot follow an exposure ramp, if it cannot: a GPIO camera ramps
    /// only in bulb mode (the rig times the exposure); a camera that can be set and the
    /// simulator always can.
    /// An `auto` ramp needs every frame measured: a gphoto2 camera that downloads them, the
    /// simulator in a scene; a GPIO camera returns no pictures. A gphoto2 camera's longest
    /// speed is 30 s, unless the program shoots in bulb mode (its Bulb through libgphoto2).
    public static func rampProblem(_ camera: CameraConfig, shoot: ShootConfig) -> String? {
        guard let ramp = shoot.ramp else { return nil }
        if camera.type == GPIOCameraConfig.type, !shoot.bulb {
            return
                "a \"gpio\" camera follows a ramp only in bulb mode (the rig holds the shutter for each frame's time): set \"bulb\": true in \"shoot\" and the camera to Bulb"
        }
        if case .auto = ramp.source {
            let unmeasured = "an \"auto\" ramp follows each frame's measured brightness, and"
            switch camera.type {
            case GPIOCameraConfig.type:
                return "\(unmeasured) a \"gpio\" camera returns no pictures to measure: use \"mode\": \"sun\" or \"keys\" (planned from the clock or by frame)"
            case GPhoto2CameraConfig.type:
                if (try? GPhoto2CameraConfig.parse(camera))?.download == nil {
                    return
                        "\(unmeasured) this gphoto2 camera downloads no frames to measure: give the camera a \"download\" folder, or use \"mode\": \"sun\" or \"keys\""
                }
            default:
                if ((try? SimCamera.checkConfig(camera)) ?? nil) == nil {
                    return
                        "\(unmeasured) a \"sim\" camera measures frames only in a scene: give it \"scene\": \"sunset\" (or keys), or use \"mode\": \"sun\" or \"keys\""
                }
            }
        }
        if camera.type == GPhoto2CameraConfig.type, ramp.longestShutterSeconds > 30 + 1e-9, !shoot.bulb {
            return
                "the ramp may expose \(rounded(ramp.longestShutterSeconds)) s, and a gphoto2 camera's longest speed is 30 s: set \"bulb\": true in \"shoot\" (the rig then holds the camera's Bulb for each frame's time, where libgphoto2 offers it), or give the ramp \"maxShutterSeconds\": 30 or less"
        }
        return nil
    }

    /// Why `program` cannot be shot with its rig's camera, if it cannot, for `rig play`,
    /// `rig check` and `rig serve` alike: a ramp the camera cannot follow, or an exposure
    /// or a bracket on a camera the rig cannot set.
    public static func problem(_ program: Program) -> String? {
        guard let camera = program.rig.camera else { return nil }
        if let problem = rampProblem(camera, shoot: program.shoot) { return problem }
        let asks = program.shoot.exposure != nil || program.shoot.bracket != nil || program.steps.contains { $0.exposure != nil }
        guard asks, !takesSettings(camera) else { return nil }
        return
            "the program sets \"exposure\" or \"bracket\", and a \"\(camera.type)\" camera cannot be set; use a \"gphoto2\" camera, or the camera's own bracket mode with shotsPerStep"
    }

    /// Why a `"liveView"` settle cannot measure on the rig's camera, as far as the file
    /// tells (`rig play` refuses the same before anything moves, from the camera itself):
    /// no camera, a `"gpio"` one, a `"sim"` one without `"preview"`; nil when it can, or
    /// when only the camera can tell (a `"gphoto2"` one).
    public static func liveViewSettleProblem(_ rig: Rig) -> String? {
        guard rig.settle?.sensor == .liveView else { return nil }
        guard let camera = rig.camera else { return "the rig has no camera, so no live view to measure" }
        switch camera.type {
        case GPIOCameraConfig.type: return "the \"gpio\" camera has no live view"
        case GPhoto2CameraConfig.type: return nil
        default:
            guard (try? SimCamera.parseConfig(camera))?.preview == nil else { return nil }
            return "the \"sim\" camera has no live view without \"preview\": {\"fps\": 10}"
        }
    }

    /// The folders a run with the rig's camera writes files into (the gphoto2 camera's
    /// `"download"`), each with the name a message gives it: checked before anything moves
    /// (`OutputPath.checkFolder`), like `--log` and `--trace`.
    public static func outputFolders(_ rig: Rig) -> [(what: String, path: String)] {
        guard let camera = rig.camera, camera.type == GPhoto2CameraConfig.type, let config = try? GPhoto2CameraConfig.parse(camera),
            let download = config.download
        else { return [] }
        return [("the camera's \"download\" folder", download)]
    }

    /// Makes the rig's camera (validated already): a part for the session, which locks,
    /// starts and closes it (a gphoto2 camera connects here, to be asked its choices,
    /// searched for `searchSeconds` at most).
    public static func open(_ rig: Rig, searchSeconds: Double = 30, logger: Logger) throws -> Camera? {
        guard let camera = rig.camera else { return nil }
        switch camera.type {
        case GPIOCameraConfig.type: return GPIOCamera(config: try GPIOCameraConfig.parse(camera, buttons: ButtonsConfig.parse(rig.buttons)))
        case GPhoto2CameraConfig.type: return try GPhoto2Camera.open(GPhoto2CameraConfig.parse(camera), within: searchSeconds, logger: logger)
        default:
            let config = try SimCamera.parseConfig(camera)
            return SimCamera(
                scene: config.scene, preview: config.preview, axisNames: rig.axes.map(\.name), restPose: rig.homePose,
                shutterStepEV: config.shutterStepEV)
        }
    }
}
