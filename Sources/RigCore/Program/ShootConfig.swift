/// How a program's shots are taken (`"shoot"` in a program file), with the rig's camera.
public struct ShootConfig: Sendable, Equatable {
    /// How long one exposure lasts: the rig holds still at least this long after the
    /// shutter closes (and, in bulb mode, holds the shutter contact this long).
    public var exposureSeconds = 0.0
    /// Bulb mode: the exposure lasts as long as the shutter contact stays closed.
    public var bulb = false
    /// Shutter closures per step (the camera's own bracket mode takes one per frame).
    public var shotsPerStep = 1

    public init(exposureSeconds: Double = 0, bulb: Bool = false, shotsPerStep: Int = 1) {
        self.exposureSeconds = exposureSeconds
        self.bulb = bulb
        self.shotsPerStep = shotsPerStep
    }

    static func parse(_ value: ValueReader) throws(FileError) -> ShootConfig {
        let object = try value.object()
        var config = ShootConfig()
        if let s = object.optional("exposureSeconds") { config.exposureSeconds = try s.number(in: 0...3600, unit: "s") }
        if let b = object.optional("bulb") { config.bulb = try b.bool() }
        if let n = object.optional("shotsPerStep") { config.shotsPerStep = try n.integer(in: 1...99) }
        if config.bulb, config.exposureSeconds <= 0 {
            throw (object.optional("exposureSeconds") ?? value).error("bulb mode holds the shutter for exposureSeconds; give exposureSeconds > 0")
        }
        try object.finish()
        return config
    }
}
