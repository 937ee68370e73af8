import Foundation

/// One frame's exposure: shutter time, ISO and aperture, and what they add up to.
public struct ExposureSettings: Sendable, Equatable {
    public var shutterSeconds: Double
    public var iso: Double
    public var aperture: Double

    public init(shutterSeconds: Double, iso: Double, aperture: Double) {
        self.shutterSeconds = shutterSeconds
        self.iso = iso
        self.aperture = aperture
    }

    /// The exposure value at ISO 100: log2(N²/t) − log2(ISO/100). A scene of luminance
    /// EV100 = S is exposed "correctly" (mid-grey at mid-grey) by settings whose `ev100` is S;
    /// one less is one stop brighter.
    public var ev100: Double { log2(aperture * aperture / shutterSeconds) - log2(iso / 100) }

    /// The image's brightness in EV from mid-grey for a scene of `sceneEV` (EV100).
    public func brightness(sceneEV: Double) -> Double { sceneEV - ev100 }
}

/// What the camera can do, for a ramp: the ISOs it may use, its fixed aperture, the
/// shutter range, and whether shutter times are continuous (bulb, timed by the rig) or
/// the camera's 1/3-stop speeds.
public struct ExposureLimits: Sendable, Equatable {
    public var isos: [Double]
    public var aperture: Double
    public var minShutterSeconds: Double
    public var maxShutterSeconds: Double
    /// True: any time in range (bulb). False: 1/3-stop speeds (1/8000 … 30 s).
    public var bulb: Bool

    public init(
        isos: [Double] = [100, 200, 400, 800, 1600, 3200, 6400], aperture: Double = 2.8, minShutterSeconds: Double = 1.0 / 8000,
        maxShutterSeconds: Double = 20, bulb: Bool = true
    ) {
        self.isos = isos.sorted()
        self.aperture = aperture
        self.minShutterSeconds = minShutterSeconds
        self.maxShutterSeconds = maxShutterSeconds
        self.bulb = bulb
    }

    /// The settings for `ev100`: the lowest ISO whose shutter time fits (a higher ISO only
    /// once the longest shutter is not enough), the shutter exact (bulb) or the nearest 1/3
    /// stop. Outside the range, the nearest end.
    public func settings(forEV ev100: Double) -> ExposureSettings {
        let n2 = aperture * aperture
        var chosenISO = isos.last ?? 100
        for iso in isos where n2 * 100 / (iso * pow(2, ev100)) <= maxShutterSeconds * 1.000001 {
            chosenISO = iso
            break
        }
        var t = n2 * 100 / (chosenISO * pow(2, ev100))
        if !bulb { t = pow(2, (log2(t) * 3).rounded() / 3) }
        t = min(max(t, minShutterSeconds), maxShutterSeconds)
        return ExposureSettings(shutterSeconds: t, iso: chosenISO, aperture: aperture)
    }

    /// The exposure values the settings can reach.
    public var evRange: ClosedRange<Double> {
        let n2 = aperture * aperture
        let low = log2(n2 / maxShutterSeconds) - log2((isos.last ?? 100) / 100)
        let high = log2(n2 / minShutterSeconds) - log2((isos.first ?? 100) / 100)
        return low...high
    }
}
