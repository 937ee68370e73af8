import RigFormat

/// Camera exposure settings a program asks for (`"exposure"` in `shoot`, or per step):
/// each one optional, kept as written; the camera's backend matches them to its own
/// choices before anything moves (`ExposureMatch`).
public struct Exposure: Sendable, Equatable {
    /// "1/250", "0.5", "2s", "30\"": seconds or a fraction of one.
    public var shutter: String?
    /// "f/8" or 8.
    public var aperture: String?
    /// 100, or a camera word such as "Auto".
    public var iso: String?
    /// Exposure compensation in EV.
    public var ev: Double?

    public init(shutter: String? = nil, aperture: String? = nil, iso: String? = nil, ev: Double? = nil) {
        self.shutter = shutter
        self.aperture = aperture
        self.iso = iso
        self.ev = ev
    }

    public var isEmpty: Bool { shutter == nil && aperture == nil && iso == nil && ev == nil }

    /// `base` with every setting this one gives put over it (a step's over the program's).
    public func over(_ base: Exposure?) -> Exposure {
        guard let base else { return self }
        return Exposure(shutter: shutter ?? base.shutter, aperture: aperture ?? base.aperture, iso: iso ?? base.iso, ev: ev ?? base.ev)
    }

    public static func parse(_ value: ValueReader) throws(FileError) -> Exposure {
        let object = try value.object()
        var exposure = Exposure()
        if let s = object.optional("shutter") {
            if case .number = s.node.value {
                exposure.shutter = format(try s.number(in: 1e-5...3600, unit: "s"))
            } else {
                let text = try s.nonEmptyString()
                guard ShutterSpeed.seconds(text) != nil else {
                    throw s.error("\"\(elided(text))\" is not a shutter speed; valid: seconds such as \"1/250\", \"0.5\" or \"30s\"")
                }
                exposure.shutter = text
            }
        }
        if let a = object.optional("aperture") {
            if case .number = a.node.value {
                exposure.aperture = "f/" + format(try a.number(in: 0.5...128))
            } else {
                let text = try a.nonEmptyString()
                guard Aperture.number(text) != nil else {
                    throw a.error("\"\(elided(text))\" is not an aperture; valid: an f-number such as \"f/8\" or 8")
                }
                exposure.aperture = text
            }
        }
        if let i = object.optional("iso") {
            if case .number = i.node.value {
                exposure.iso = String(try i.integer(in: 1...10_000_000))
            } else {
                exposure.iso = try i.nonEmptyString()
            }
        }
        if let e = object.optional("ev") { exposure.ev = try e.number(in: -10...10, unit: "EV") }
        try object.finish()
        if exposure.isEmpty { throw value.error("an empty exposure; give any of \"shutter\", \"aperture\", \"iso\", \"ev\"") }
        return exposure
    }
}

/// Several frames at one pose, each its own exposure (HDR): `"bracket": {"count", "stepEV"}`.
public struct Bracket: Sendable, Equatable {
    public var count: Int
    public var stepEV: Double

    public static let counts = [3, 5, 7, 9]
    public static let stepRange = 0.3...3.0

    public init(count: Int, stepEV: Double) {
        self.count = count
        self.stepEV = stepEV
    }

    /// Each frame's offset from the base exposure in EV, in shooting order: 0, −1, +1, −2,
    /// +2, … steps (the normal frame first, as cameras bracket).
    public var offsetsEV: [Double] {
        var offsets = [0.0]
        var k = 1
        while offsets.count < count {
            offsets.append(-Double(k) * stepEV)
            offsets.append(Double(k) * stepEV)
            k += 1
        }
        return offsets
    }

    public static func parse(_ value: ValueReader) throws(FileError) -> Bracket {
        let object = try value.object()
        let countValue = try object.required("count", "3, 5, 7 or 9 frames")
        let count = try countValue.integer()
        guard counts.contains(count) else { throw countValue.error("\(count) frames; valid: 3, 5, 7 or 9") }
        let step = try object.required("stepEV", "EV between frames, 0.3…3").number(in: stepRange, unit: "EV")
        try object.finish()
        return Bracket(count: count, stepEV: step)
    }
}

/// Shutter speeds as cameras write them: "1/250", "0.0040s", "2", "2s", "30\"", "1.3\"".
public enum ShutterSpeed {
    /// The speed in seconds, or nil for text that is not one ("Bulb", "Auto").
    public static func seconds(_ text: String) -> Double? {
        var t = Substring(text.trimmingCharacters(in: " "))
        while let last = t.last, last == "s" || last == "\"" || last == " " { t = t.dropLast() }
        if let slash = t.firstIndex(of: "/") {
            // "1e400/1" reads as infinity: only a finite, positive time is a speed.
            guard let a = Double(t[..<slash]), let b = Double(t[t.index(after: slash)...]), a > 0, b > 0, (a / b).isFinite else { return nil }
            return a / b
        }
        guard let s = Double(t), s > 0, s.isFinite else { return nil }
        return s
    }
}

/// Apertures as cameras write them: "f/8", "f8", "8", "f/5.6".
public enum Aperture {
    public static func number(_ text: String) -> Double? {
        var t = Substring(text.trimmingCharacters(in: " ").lowercased())
        if t.hasPrefix("f/") { t = t.dropFirst(2) } else if t.hasPrefix("f") { t = t.dropFirst() }
        guard let n = Double(t), n > 0, n.isFinite else { return nil }
        return n
    }
}

extension String {
    fileprivate func trimmingCharacters(in set: Character) -> String {
        var s = Substring(self)
        while s.first == set { s = s.dropFirst() }
        while s.last == set { s = s.dropLast() }
        return String(s)
    }
}
