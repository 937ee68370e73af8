import FoundationEssentials
import Glibc
import RigFormat

/// `{"event":"image", …}`: what a frame looked like, measured once the camera's file was
/// downloaded (after its `shot` event: the rig moves on meanwhile). Brightness is of the
/// image's luma as stored (gamma-encoded 0…1), and as EV from mid-grey on linear light, so
/// an exposure ramp can hold it.
public struct ShotLogImage: Sendable, Equatable {
    public var step: Int
    public var bracket: Int?
    /// The file the camera reported (the `shot` event's `file`).
    public var file: String
    /// Mean luma, 0…1 as stored.
    public var meanLevel: Double
    /// log2 of the mean linear luminance over 18 % grey: 0 is a "correct" exposure of an
    /// average scene, −1 one stop under.
    public var brightnessEV: Double
    /// Fractions of pixels at the ends (luma ≥ 250/255, ≤ 5/255).
    public var clippedHigh: Double
    public var clippedLow: Double
    /// A small copy of the image, if one was kept.
    public var preview: String?
    /// The luma histogram in 16 bins, each in thousandths of the pixels (dark to light).
    public var histogram: [Int]?
    /// The downloaded file's size as stored, in pixels, when it was decoded itself (not a
    /// raw file's preview): the size a stitcher file declares for it.
    public var width: Int?
    public var height: Int?
    /// The scene's EV100 an exposure ramp read from this frame: the settings the camera
    /// really made plus the brightness measured; nil without a ramp.
    public var sceneEV: Double?

    public init(
        step: Int, bracket: Int? = nil, file: String, meanLevel: Double, brightnessEV: Double, clippedHigh: Double, clippedLow: Double,
        preview: String? = nil, histogram: [Int]? = nil, width: Int? = nil, height: Int? = nil
    ) {
        self.histogram = histogram
        self.width = width
        self.height = height
        self.step = step
        self.bracket = bracket
        self.file = file
        self.meanLevel = meanLevel
        self.brightnessEV = brightnessEV
        self.clippedHigh = clippedHigh
        self.clippedLow = clippedLow
        self.preview = preview
    }

    /// The event as one line of JSON, without the line break.
    public func jsonLine() -> String {
        var out = "{\"event\":\"image\",\"step\":\(step)"
        if let bracket { out += ",\"bracket\":\(bracket)" }
        out += ",\"file\":\(JSONText.string(file)),\"meanLevel\":\(JSONText.number(rounded4(meanLevel)))"
        out += ",\"brightnessEV\":\(JSONText.number(rounded4(brightnessEV)))"
        if let sceneEV { out += ",\"sceneEV\":\(JSONText.number(rounded4(sceneEV)))" }
        out += ",\"clippedHigh\":\(JSONText.number(rounded4(clippedHigh))),\"clippedLow\":\(JSONText.number(rounded4(clippedLow)))"
        if let preview { out += ",\"preview\":\(JSONText.string(preview))" }
        if let histogram { out += ",\"histogram\":[" + histogram.map(String.init).joined(separator: ",") + "]" }
        if let width, let height { out += ",\"width\":\(width),\"height\":\(height)" }
        return out + "}"
    }

    private func rounded4(_ x: Double) -> Double { (x * 10_000).rounded() / 10_000 }

    init(reading object: ObjectReader) throws(FileError) {
        step = try object.required("step").integer(in: 1...Int(Int32.max))
        bracket = try object.optional("bracket")?.integer(in: 1...Int(Int32.max))
        file = try object.required("file").string()
        meanLevel = try object.required("meanLevel").number(in: 0...1)
        brightnessEV = try object.required("brightnessEV").number(in: -40...40, unit: "EV")
        sceneEV = try object.optional("sceneEV")?.number(in: -80...80, unit: "EV")
        clippedHigh = try object.required("clippedHigh").number(in: 0...1)
        clippedLow = try object.required("clippedLow").number(in: 0...1)
        preview = try object.optional("preview")?.string()
        if let bins = object.optional("histogram") {
            var values: [Int] = []
            for bin in try bins.array() { values.append(try bin.integer(in: 0...1000)) }
            guard values.count == 16 else { throw bins.error("\(values.count) bins; valid: 16") }
            histogram = values
        } else {
            histogram = nil
        }
        width = try object.optional("width")?.integer(in: 1...1_000_000)
        height = try object.optional("height")?.integer(in: 1...1_000_000)
        if (width == nil) != (height == nil) {
            throw object.error("give both \"width\" and \"height\", or neither")
        }
        try object.finish()
    }

    /// The measures of a luma histogram (256 bins of 8-bit levels, as stored).
    public static func measures(histogram: [Int]) -> (meanLevel: Double, brightnessEV: Double, clippedHigh: Double, clippedLow: Double)? {
        let total = histogram.reduce(0, +)
        guard histogram.count == 256, total > 0 else { return nil }
        var level = 0.0
        var linear = 0.0
        for (value, count) in histogram.enumerated() where count > 0 {
            let v = Double(value) / 255
            level += v * Double(count)
            linear += srgbToLinear(v) * Double(count)
        }
        let n = Double(total)
        let high = Double(histogram[250...].reduce(0, +)) / n
        let low = Double(histogram[...5].reduce(0, +)) / n
        // A black frame has no finite EV: call it 20 stops under.
        let ev = linear > 0 ? log2(linear / n / 0.18) : -20
        return (level / n, max(ev, -20), high, low)
    }

    /// A 256-bin histogram as 16 bins of thousandths of the pixels.
    public static func sixteenBins(_ histogram: [Int]) -> [Int]? {
        let total = histogram.reduce(0, +)
        guard histogram.count == 256, total > 0 else { return nil }
        return (0..<16).map { bin in
            let count = histogram[(bin * 16)..<(bin * 16 + 16)].reduce(0, +)
            return Int((Double(count) * 1000 / Double(total)).rounded())
        }
    }

    /// The sRGB transfer function, inverted.
    public static func srgbToLinear(_ v: Double) -> Double {
        v <= 0.04045 ? v / 12.92 : pow((v + 0.055) / 1.055, 2.4)
    }
}
