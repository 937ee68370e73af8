import Foundation

/// The light a simulated camera sees (`"scene"` of a `sim` camera): the scene's EV100 over
/// the run's time, so a ramp can be measured end to end without a camera.
public struct SimScene: Sendable, Equatable {
    /// (seconds, EV100) keys, interpolated in EV along a cosine ease between keys.
    public var keys: [(seconds: Double, ev: Double)]
    /// Frames (1-based shot numbers) lit by something passing (a car's lights): that one frame
    /// measures `outlierEV` brighter than the scene.
    public var outliers: [Int: Double]

    public init(keys: [(seconds: Double, ev: Double)], outliers: [Int: Double] = [:]) {
        self.keys = keys.sorted { $0.seconds < $1.seconds }
        self.outliers = outliers
    }

    public static func == (a: SimScene, b: SimScene) -> Bool {
        a.keys.map(\.seconds) == b.keys.map(\.seconds) && a.keys.map(\.ev) == b.keys.map(\.ev) && a.outliers == b.outliers
    }

    /// A sunset: EV 14 (daylight) to EV −4 (night, moonless) over 90 minutes, the light
    /// falling fastest around the sun's setting (a cosine ease).
    public static let sunset = SimScene(keys: [(0, 14), (5400, -4)])
    public static let sunrise = SimScene(keys: [(0, -4), (5400, 14)])

    public func ev(at seconds: Double) -> Double {
        guard let first = keys.first, let last = keys.last else { return 0 }
        if seconds <= first.seconds { return first.ev }
        if seconds >= last.seconds { return last.ev }
        let i = keys.lastIndex { $0.seconds <= seconds } ?? 0
        let (a, b) = (keys[i], keys[min(i + 1, keys.count - 1)])
        guard b.seconds > a.seconds else { return b.ev }
        let u = (seconds - a.seconds) / (b.seconds - a.seconds)
        return a.ev + (b.ev - a.ev) * (1 - cos(u * .pi)) / 2
    }

    /// What a frame taken with `settings` at `seconds` measures (EV from mid-grey).
    public func brightness(frame: Int, at seconds: Double, settings: ExposureSettings) -> Double {
        settings.brightness(sceneEV: ev(at: seconds)) + (outliers[frame] ?? 0)
    }
}
