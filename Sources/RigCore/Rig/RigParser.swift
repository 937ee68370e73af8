import RigFormat

/// Reads rig files (`rigs/*.json`). Every problem is a `FileError` with its location.
public enum RigParser {
    public static func parse(text: String, file: String) throws(FileError) -> Rig {
        let root: JSONNode
        do { root = try JSONParser.parse(text) } catch { throw error.fileError(file: file) }
        return try parse(ValueReader(root, JSONContext(file: file)))
    }

    /// Parses a rig from a JSON value (a rig file's root, or a rig embedded in a program).
    public static func parse(_ value: ValueReader) throws(FileError) -> Rig {
        let object = try value.object()
        object.allow("$schema", "description")
        let name = try object.optional("name")?.nonEmptyString() ?? "rig"
        var output = try object.optional("output").map { v throws(FileError) in try OutputConfig.parse(v) } ?? .sim
        var loopRate = Rig.defaultLoopRateHz
        if let rate = object.optional("loopRateHz") {
            loopRate = try rate.number(in: Rig.loopRateRangeHz, unit: "Hz")
        }
        let axesValue = try object.required("axes", "an array of axis objects")
        var axes: [Axis] = []
        for axisValue in try axesValue.nonEmptyArray() {
            let axis = try parseAxis(axisValue)
            if axes.contains(where: { $0.name == axis.name }) {
                throw (axisValue.member("name") ?? axisValue).error("axis name \"\(elided(axis.name))\" is used twice; axis names must be unique")
            }
            if let other = axes.first(where: { $0.channel == axis.channel }) {
                throw (axisValue.member("channel") ?? axisValue).error(
                    "channel \(axis.channel) is already used by axis \"\(elided(other.name))\"; each axis needs its own channel")
            }
            axes.append(axis)
            // The driver checks the channel against its own count, at this place.
            output.channelPlaces.append(ConfigSection(axisValue.member("channel") ?? axisValue))
        }
        // Kept whole for the modules that own them (`Devices.check` has them read).
        let stepSync = object.optional("stepSync").map(ConfigSection.init)
        let buttons = object.optional("buttons").map(ConfigSection.init)
        let jog = object.optional("jog").map(ConfigSection.init)
        let dfmoco = object.optional("dfmoco").map(ConfigSection.init)
        let group = object.optional("group").map(ConfigSection.init)
        let imu = object.optional("imu").map(ConfigSection.init)
        let camera = try object.optional("camera").map { v throws(FileError) in try CameraConfig.parse(v) }
        let site = try object.optional("site").map { v throws(FileError) in try ProgramParser.parseSite(v) }
        let settle = try object.optional("settle").map { v throws(FileError) in try MeasuredSettle.parse(v) }
        if let settle, settle.sensor == .sim, output.type != "sim", let v = object.optional("settle") {
            throw v.error("\"sensor\": \"sim\" measures the simulated rig's payload; this rig's output is \"\(output.type)\"")
        }
        if let settle, settle.sensor == .imu, imu == nil, let v = object.optional("settle") {
            throw ((try? v.object())?.optional("sensor") ?? v).error(
                "\"sensor\": \"imu\" reads the gyro of the rig file's \"imu\" section, which this file lacks; add \"imu\": {\"bus\": 1, \"address\": \"0x68\"}")
        }
        try object.finish()
        var rig = Rig(name: name, axes: axes, output: output, loopRateHz: loopRate)
        rig.jog = jog
        rig.stepSync = stepSync
        rig.buttons = buttons
        rig.dfmoco = dfmoco
        rig.group = group
        rig.camera = camera
        rig.site = site
        rig.settle = settle
        rig.imu = imu
        return rig
    }

    static func parseAxis(_ value: ValueReader) throws(FileError) -> Axis {
        let object = try value.object()
        let nameValue = try object.required("name")
        let name = try nameValue.nonEmptyString()
        guard name.utf8.allSatisfy({ isIdentifierByte($0) }) else {
            throw nameValue.error("\"\(elided(name))\" is not a valid axis name; use letters, digits, '-' and '_'")
        }
        let kind = AxisKind(rawValue: try object.optional("kind")?.oneOf(["servo", "pwm"]) ?? "servo") ?? .servo
        let channelValue = try object.required("channel", "the output channel number")
        // Which channels exist is the output driver's to say (`OutputConfig.checkChannels`).
        let channel = try channelValue.integer()
        let invertedValue = object.optional("inverted")
        let inverted = try invertedValue?.bool() ?? false

        var calibration: Calibration?
        let fullRange: ClosedRange<Double>
        switch kind {
        case .servo:
            calibration = try parseCalibration(object, inverted: inverted)
            fullRange = calibration?.angleRange ?? -90...90
        case .pwm:
            for key in ["pulseUs", "angleDeg", "calibration"] where object.has(key) {
                object.allow(key)
                let member = object.members.first { $0.key == key }
                let ctx = object.context.appending(key: key)
                throw ctx.error("a pwm axis has no pulse calibration; remove \"\(key)\" or set \"kind\": \"servo\"", at: member?.keyLocation ?? object.location)
            }
            if inverted, let invertedValue {
                throw invertedValue.error("\"inverted\" is for servo axes; a pwm axis's position is its duty cycle")
            }
            fullRange = 0...100
        }
        let unit = kind == .servo ? "°" : "%"

        var softMin = fullRange.lowerBound
        var softMax = fullRange.upperBound
        if let limits = object.optional("softLimits") {
            // Bounded by the calibrated range below (itself within Bounds.calibrationAngleDegrees).
            let pair = try limits.numbers(count: 2)
            guard pair[0] < pair[1] else {
                throw limits.error("soft limits [\(format(pair[0])), \(format(pair[1]))] must be [min, max] with min < max")
            }
            guard fullRange.contains(pair[0]), fullRange.contains(pair[1]) else {
                let what = kind == .servo ? "the calibrated angle range" : "the duty-cycle range"
                throw limits.error(
                    "soft limits [\(format(pair[0])), \(format(pair[1]))] leave \(what) \(format(fullRange.lowerBound))…\(format(fullRange.upperBound))\(unit)")
            }
            softMin = pair[0]
            softMax = pair[1]
        }
        let softRange = softMin...softMax
        func position(_ key: String) throws(FileError) -> Double? {
            guard let v = object.optional(key) else { return nil }
            let x = try v.number()
            guard softRange.contains(x) else {
                throw v.error("\(format(x))\(unit) is outside the soft limits; valid: \(format(softMin))…\(format(softMax))\(unit)")
            }
            return x
        }
        let defaultHome = kind == .pwm ? softMin : min(max(0, softMin), softMax)
        let home = try position("home") ?? defaultHome
        let park = try position("park")

        let maxVelocity = try object.optional("maxVelocity")?.number(in: Bounds.velocity, unit: "\(unit)/s") ?? (kind == .servo ? 90 : 50)
        let maxAcceleration = try object.optional("maxAcceleration")?.number(in: Bounds.acceleration, unit: "\(unit)/s²") ?? (kind == .servo ? 180 : 100)
        var maxJerk: Double?
        if let value = object.optional("maxJerk") {
            let jerk = try value.positiveNumber(unit: "\(unit)/s³")
            let ramps = Axis.jerkRampSecondsRange
            let lowest = maxAcceleration / ramps.upperBound
            let highest = maxAcceleration / ramps.lowerBound
            guard jerk >= lowest, jerk <= highest else {
                throw value.error(
                    "maxJerk \(format(jerk))\(unit)/s³ would ramp to maxAcceleration in \(format(maxAcceleration / jerk)) s; valid: \(format(lowest))…\(format(highest))\(unit)/s³ (a ramp of 1 ms…1 s)"
                )
            }
            maxJerk = jerk
        }
        let idle = IdlePolicy(rawValue: try object.optional("idle")?.oneOf(["hold", "release"]) ?? "hold") ?? .hold
        let backlash = try object.optional("backlashDeg")?.number(in: 0...(softMax - softMin) / 2, unit: unit) ?? 0
        let payload = try object.optional("payload").map { v throws(FileError) in try Payload.parse(v) }
        let shaper = try object.optional("shaper").map { v throws(FileError) in try ShaperConfig.parse(v) }
        // A shaped axis's moves need no jerk ramp: the shaper smooths them (see `Axis.shapedJerkRampSeconds`).
        let jerk = maxJerk ?? maxAcceleration / (shaper == nil ? Axis.defaultJerkRampSeconds : Axis.shapedJerkRampSeconds)
        var servo = ServoImperfection()
        for key in ["deadbandDeg", "lagSeconds"] where kind == .pwm && object.has(key) {
            object.allow(key)
            let member = object.members.first { $0.key == key }
            throw object.context.appending(key: key).error(
                "\"\(key)\" describes a servo; remove it or set \"kind\": \"servo\"", at: member?.keyLocation ?? object.location)
        }
        if kind == .servo, let v = object.optional("deadbandDeg") { servo.deadbandDeg = try v.number(in: ServoImperfection.deadbandRangeDeg, unit: "°") }
        if kind == .servo, let v = object.optional("lagSeconds") { servo.lagSeconds = try v.number(in: ServoImperfection.lagRangeSeconds, unit: "s") }
        try object.finish()
        var axis = Axis(
            name: name, kind: kind, channel: channel, calibration: calibration, home: home, park: park,
            softMin: softMin, softMax: softMax, maxVelocity: maxVelocity, maxAcceleration: maxAcceleration, maxJerk: jerk, idle: idle)
        axis.backlashDeg = backlash
        axis.payload = payload
        axis.shaper = shaper
        axis.servo = servo
        return axis
    }

    static func parseCalibration(_ object: ObjectReader, inverted: Bool) throws(FileError) -> Calibration {
        var points: [(angleDeg: Double, pulseMicroseconds: Double)] = []
        let where_: ValueReader?
        if let table = object.optional("calibration") {
            for key in ["pulseUs", "angleDeg"] where object.has(key) {
                throw table.error("give either \"calibration\" or \"pulseUs\"/\"angleDeg\", not both")
            }
            for point in try table.nonEmptyArray() {
                let pair = try point.numbers(count: 2)
                guard Bounds.calibrationAngleDegrees.contains(pair[0]) else {
                    throw point.error(
                        "angle \(format(pair[0]))° is out of range; valid: \(format(Bounds.calibrationAngleDegrees.lowerBound))…\(format(Bounds.calibrationAngleDegrees.upperBound))° ([angle, pulse] pairs)"
                    )
                }
                guard (200...3000).contains(pair[1]) else {
                    throw point.error("pulse \(format(pair[1])) µs is out of range; valid: 200…3000 µs ([angle, pulse] pairs)")
                }
                points.append((pair[0], pair[1]))
            }
            where_ = table
        } else {
            var pulses = [1000.0, 2000.0]
            var angles = [-90.0, 90.0]
            if let p = object.optional("pulseUs") {
                pulses = try p.numbers(count: 2)
                for x in pulses where !(200...3000).contains(x) {
                    throw p.error("pulse \(format(x)) µs is out of range; valid: 200…3000 µs")
                }
                guard pulses[0] != pulses[1] else { throw p.error("the two pulse widths must differ") }
            }
            if let a = object.optional("angleDeg") {
                angles = try a.numbers(count: 2, in: Bounds.calibrationAngleDegrees, unit: "°")
                guard angles[0] != angles[1] else { throw a.error("the two angles must differ") }
            }
            points = [(angles[0], pulses[0]), (angles[1], pulses[1])]
            where_ = object.optional("pulseUs") ?? object.optional("angleDeg")
        }
        switch Calibration.make(points: points, inverted: inverted) {
        case .success(let calibration): return calibration
        case .failure(let problem):
            throw where_?.error(problem.description) ?? object.error(problem.description)
        }
    }
}

@inline(__always)
func isIdentifierByte(_ b: UInt8) -> Bool {
    (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || b == 0x5F || b == 0x2D
}
