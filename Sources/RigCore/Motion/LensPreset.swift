import RigFormat

/// Lenses by name, for a panorama's `"lens": "fullframe-24mm"`: a common sensor and a
/// focal length. The sensors (docs/shooting.md lists them; the schema's pattern too):
///
/// | name          | sensor                                                 | mm          |
/// |---------------|--------------------------------------------------------|-------------|
/// | `fullframe`   | 35 mm full frame                                        | 36 × 24     |
/// | `aps-c`       | APS-C, 1.5× crop (Nikon DX, Sony, Fujifilm, Pentax)     | 23.5 × 15.6 |
/// | `aps-c-canon` | Canon APS-C, 1.6× crop                                  | 22.3 × 14.9 |
/// | `mft`         | Micro Four Thirds, 2× crop (Olympus/OM, Panasonic)      | 17.3 × 13   |
/// | `1-inch`      | 1-inch type, 2.7× crop (Sony RX100, DJI, Panasonic)     | 13.2 × 8.8  |
public struct LensPreset: Sendable, Equatable {
    public struct Sensor: Sendable, Equatable {
        public var name: String
        public var widthMillimetres: Double
        public var heightMillimetres: Double
    }

    /// The sensors a preset may name, most common first.
    public static let sensors: [Sensor] = [
        Sensor(name: "fullframe", widthMillimetres: 36, heightMillimetres: 24),
        Sensor(name: "aps-c", widthMillimetres: 23.5, heightMillimetres: 15.6),
        Sensor(name: "aps-c-canon", widthMillimetres: 22.3, heightMillimetres: 14.9),
        Sensor(name: "mft", widthMillimetres: 17.3, heightMillimetres: 13),
        Sensor(name: "1-inch", widthMillimetres: 13.2, heightMillimetres: 8.8),
    ]

    /// Focal lengths a preset may give, in mm (as `focalLengthMm`).
    public static let focalLengths: ClosedRange<Double> = 1...2000

    /// What a preset name looks like, for messages.
    public static let grammar = "SENSOR-FOCALmm, SENSOR one of \(sensors.map(\.name).joined(separator: ", ")) (e.g. \"fullframe-24mm\", \"aps-c-18mm\")"

    public var sensor: Sensor
    public var focalLengthMillimetres: Double

    /// The lens a name means, or why there is none (a message naming what is valid).
    public static func named(_ name: String) -> Result<LensPreset, PresetError> {
        // The sensor is the longest name the text starts with followed by "-": "aps-c-canon-18mm"
        // is the Canon sensor, not "aps-c" with a focal length "canon-18".
        let candidates = sensors.filter { name.hasPrefix($0.name + "-") }.sorted { $0.name.count > $1.name.count }
        guard let sensor = candidates.first else {
            let guess = name.split(separator: "-").dropLast().joined(separator: "-")
            let near = sensors.min { editDistance($0.name, guess) < editDistance($1.name, guess) }
            let hint = near.map { editDistance($0.name, guess) <= 2 ? " (did you mean \"\($0.name)\"?)" : "" } ?? ""
            return .failure(PresetError(message: "no lens preset \"\(name)\"\(hint); valid: \(grammar)"))
        }
        let rest = name.dropFirst(sensor.name.count + 1)
        guard rest.hasSuffix("mm"), let focal = Double(rest.dropLast(2)), focal.isFinite,
            case let digits = rest.dropLast(2), digits.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }),
            digits.first != ".", digits.last != "."
        else {
            return .failure(
                PresetError(
                    message: "\"\(name)\": after the sensor \"\(sensor.name)\" comes the focal length, as in \"\(sensor.name)-24mm\"; valid: \(grammar)"))
        }
        guard focalLengths.contains(focal) else {
            return .failure(PresetError(message: "\"\(name)\": a \(format(focal)) mm focal length; valid: 1…2000 mm"))
        }
        return .success(LensPreset(sensor: sensor, focalLengthMillimetres: focal))
    }

    public struct PresetError: Error, Sendable, Equatable {
        public var message: String
    }
}
