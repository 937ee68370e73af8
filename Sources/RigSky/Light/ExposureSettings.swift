import FoundationEssentials
import Glibc

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

/// What the camera can do, for a ramp: the ISOs it may use, its aperture (fixed, or free to
/// close down to `narrowestAperture`), the shutter range, whether shutter times are
/// continuous (bulb, timed by the rig) or the camera's 1/3-stop speeds, and which setting
/// moves first as the light changes.
public struct ExposureLimits: Sendable, Equatable {
    /// A setting a ramp may move.
    public enum Setting: String, Sendable, CaseIterable {
        case shutter, iso, aperture
    }

    public var isos: [Double]
    /// The widest aperture (the f-number the ramp opens to in the dark; all it uses unless
    /// `narrowestAperture` is given).
    public var aperture: Double
    /// The f-number the aperture may close down to in bright light (when `priority` moves
    /// the aperture); nil: the aperture stays.
    public var narrowestAperture: Double?
    public var minShutterSeconds: Double
    public var maxShutterSeconds: Double
    /// True: any time in range (bulb). False: 1/3-stop speeds (1/8000 … 30 s).
    public var bulb: Bool
    /// The order the settings give more exposure in as the light falls (and take it back in
    /// reverse as it rises): the first moves across its whole range before the next moves.
    /// Default shutter, then ISO (the aperture last, when it may move).
    public var priority: [Setting]

    public init(
        isos: [Double] = [100, 200, 400, 800, 1600, 3200, 6400], aperture: Double = 2.8, minShutterSeconds: Double = 1.0 / 8000,
        maxShutterSeconds: Double = 20, bulb: Bool = true, narrowestAperture: Double? = nil, priority: [Setting] = [.shutter, .iso, .aperture]
    ) {
        self.isos = isos.sorted()
        self.aperture = aperture
        self.minShutterSeconds = minShutterSeconds
        self.maxShutterSeconds = maxShutterSeconds
        self.bulb = bulb
        self.narrowestAperture = narrowestAperture
        self.priority = priority + Setting.allCases.filter { !priority.contains($0) }
    }

    /// The settings for `ev100`. From the brightest-scene settings (the shortest time, the
    /// lowest ISO, the narrowest aperture), each setting in `priority` order gives the
    /// exposure still missing, as far as its range allows (an ISO, a whole listed step: the
    /// lowest that is enough, or the highest not over when only a later setting can make up
    /// the rest); then the last setting that moved makes the total exact (bulb) or takes
    /// the nearest 1/3 stop. Outside the range, the nearest end.
    /// The default priority is the lowest ISO whose shutter time fits: a higher ISO only
    /// once the longest shutter is not enough.
    public func settings(forEV ev100: Double) -> ExposureSettings {
        let target = pow(2, ev100)
        let wide = aperture
        let narrow = max(narrowestAperture ?? aperture, aperture)
        var t = minShutterSeconds
        var iso = isos.first ?? 100
        var n = narrow
        // The time, ISO or f-number that makes `ev100` with the others as they are.
        func shutterFor() -> Double { n * n * 100 / (iso * target) }
        func isoFor() -> Double { n * n * 100 / (t * target) }
        func apertureFor() -> Double { (t * iso * target / 100).squareRoot() }
        func canGive(_ setting: Setting) -> Bool {
            setting == .shutter ? t < maxShutterSeconds / 1.000001 : setting == .aperture && n > wide * 1.000001
        }
        func canTakeBack(_ setting: Setting) -> Bool {
            setting == .shutter ? t > minShutterSeconds * 1.000001 : setting == .aperture && n < narrow / 1.000001
        }
        for (index, setting) in priority.enumerated() {
            switch setting {
            case .shutter: t = min(max(shutterFor(), minShutterSeconds), maxShutterSeconds)
            case .iso:
                let needed = isoFor()
                // The lowest listed ISO that is enough when a setting before it can take
                // back the excess; else the highest not over what is needed when one after
                // it can give the rest; else the lowest that is enough.
                if !priority[..<index].contains(where: canTakeBack), priority[(index + 1)...].contains(where: canGive) {
                    iso = isos.last { $0 <= needed * 1.000001 } ?? isos.first ?? 100
                } else {
                    iso = isos.first { $0 >= needed / 1.000001 } ?? isos.last ?? 100
                }
            case .aperture: n = min(max(apertureFor(), wide), narrow)
            }
        }
        // The last setting that moved makes the total exact (and, in 1/3-stop mode, takes
        // the nearest third): the first from the end that is not held at an end of its range.
        for setting in priority.reversed() where setting != .iso {
            if setting == .shutter {
                let exact = shutterFor()
                t = min(max(exact, minShutterSeconds), maxShutterSeconds)
                if !bulb { t = min(max(pow(2, (log2(t) * 3).rounded() / 3), minShutterSeconds), maxShutterSeconds) }
                if exact > minShutterSeconds && exact < maxShutterSeconds { break }
            } else if narrow > wide {
                let exact = apertureFor()
                n = min(max(exact, wide), narrow)
                if !bulb { n = min(max(pow(2, (log2(n) * 6).rounded() / 6), wide), narrow) }
                if exact > wide && exact < narrow { break }
            }
        }
        return ExposureSettings(shutterSeconds: t, iso: iso, aperture: n)
    }

    /// The exposure values the settings can reach.
    public var evRange: ClosedRange<Double> {
        let low = log2(aperture * aperture / maxShutterSeconds) - log2((isos.last ?? 100) / 100)
        let narrow = max(narrowestAperture ?? aperture, aperture)
        let high = log2(narrow * narrow / minShutterSeconds) - log2((isos.first ?? 100) / 100)
        return low...high
    }
}
