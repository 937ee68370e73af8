import FoundationEssentials
import Glibc
import RigFormat
import RigSky

/// How a program's shots are taken (`"shoot"` in a program file), with the rig's camera.
public struct ShootConfig: Sendable, Equatable {
    /// How long one exposure lasts: the rig holds still at least this long after the
    /// shutter closes (and, in bulb mode, holds the shutter contact this long).
    public var exposureSeconds = 0.0
    /// Bulb mode: the exposure lasts as long as the shutter contact stays closed.
    public var bulb = false
    /// Shutter closures per step (the camera's own bracket mode takes one per frame).
    public var shotsPerStep = 1
    /// Settings for a camera that can be set (`gphoto2`), for every step; a step's own
    /// `exposure` goes over it.
    public var exposure: Exposure?
    /// The rig sets each frame's shutter speed itself; `shotsPerStep` is its count.
    public var bracket: Bracket?
    /// A timelapse's exposure following the light, frame by frame.
    public var ramp: ExposureRamp?

    public init(exposureSeconds: Double = 0, bulb: Bool = false, shotsPerStep: Int = 1, exposure: Exposure? = nil, bracket: Bracket? = nil) {
        self.exposureSeconds = exposureSeconds
        self.bulb = bulb
        self.shotsPerStep = shotsPerStep
        self.exposure = exposure
        self.bracket = bracket
    }

    static func parse(_ value: ValueReader, site: Site? = nil) throws(FileError) -> ShootConfig {
        let object = try value.object()
        var config = ShootConfig()
        if let s = object.optional("exposureSeconds") { config.exposureSeconds = try s.number(in: 0...3600, unit: "s") }
        if let b = object.optional("bulb") { config.bulb = try b.bool() }
        if let n = object.optional("shotsPerStep") { config.shotsPerStep = try n.integer(in: 1...99) }
        if let e = object.optional("exposure") { config.exposure = try Exposure.parse(e) }
        if let b = object.optional("bracket") {
            if let n = object.optional("shotsPerStep") {
                throw n.error("a bracket takes its own count of frames per step; remove shotsPerStep (it is for the camera's own bracket mode)")
            }
            let bracket = try Bracket.parse(b)
            config.bracket = bracket
            config.shotsPerStep = bracket.count
        }
        if let r = object.optional("ramp") {
            if config.bracket != nil || config.exposure != nil {
                throw r.error("a ramp sets every frame's exposure; remove \"exposure\" and \"bracket\"")
            }
            let ramp = try ExposureRamp.parse(r, site: site)
            config.ramp = ramp
            // The rig holds still for the longest exposure the ramp may make.
            config.exposureSeconds = max(config.exposureSeconds, ramp.longestShutterSeconds)
        }
        if config.exposureSeconds == 0, let shutter = config.exposure?.shutter, let seconds = ShutterSpeed.seconds(shutter) {
            // The rig holds still for the exposure it set (the longest frame of a bracket).
            config.exposureSeconds = seconds * pow(2, (config.bracket.map { Double($0.count / 2) * $0.stepEV }) ?? 0)
        }
        if config.bulb, config.exposureSeconds <= 0 {
            throw (object.optional("exposureSeconds") ?? value).error("bulb mode holds the shutter for exposureSeconds; give exposureSeconds > 0")
        }
        try object.finish()
        return config
    }
}
