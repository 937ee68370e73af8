import FoundationEssentials
import Glibc
import RigFormat

/// Where the rig stands: for sky positions and the sun's times.
public struct Site: Sendable, Equatable {
    /// Degrees, north positive.
    public var latitude: Double
    /// Degrees, east positive.
    public var longitude: Double
    public var elevationM: Double
    /// The air at the site, for refraction: given, else the standard atmosphere at
    /// `elevationM` (about 760 hPa and 0 °C at 2,400 m, against 1013 hPa and 15 °C at sea level).
    public var pressureHPa: Double?
    public var temperatureC: Double?

    public init(latitude: Double, longitude: Double, elevationM: Double = 0, pressureHPa: Double? = nil, temperatureC: Double? = nil) {
        self.latitude = latitude
        self.longitude = longitude
        self.elevationM = elevationM
        self.pressureHPa = pressureHPa
        self.temperatureC = temperatureC
    }

    /// The pressure refraction is computed with: `pressureHPa`, else the International
    /// Standard Atmosphere's at the elevation, 1013.25 · (1 − 2.25577e−5 · h)^5.25588.
    public var refractionPressureHPa: Double {
        pressureHPa ?? 1013.25 * pow(max(1 - 2.25577e-5 * elevationM, 0), 5.25588)
    }

    /// The temperature refraction is computed with: `temperatureC`, else the standard
    /// atmosphere's, 15 °C falling 6.5 °C per km.
    public var refractionTemperatureC: Double { temperatureC ?? 15 - 0.0065 * elevationM }
}

/// What to point at: the sun, the moon, or a fixed point of the sky by its J2000 right
/// ascension and declination (a star, the galactic centre).
public enum SkyTarget: Sendable, Equatable {
    case sun
    case moon
    case fixed(raDegrees: Double, decDegrees: Double)

    /// The galactic centre (Sgr A*), J2000.
    public static let galacticCentre = SkyTarget.fixed(raDegrees: 266.41684, decDegrees: -29.00781)

    public var name: String {
        switch self {
        case .sun: "the sun"
        case .moon: "the moon"
        case .fixed(let ra, let dec): "RA \(format((ra * 1000).rounded() / 1000))° Dec \(format((dec * 1000).rounded() / 1000))°"
        }
    }
}

/// A direction from the site: azimuth from north through east, 0…360°, and altitude above
/// the horizon (with refraction unless asked otherwise).
public struct HorizontalPosition: Sendable, Equatable {
    public var azimuth: Double
    public var altitude: Double

    public init(azimuth: Double, altitude: Double) {
        self.azimuth = azimuth
        self.altitude = altitude
    }

    /// The angle between two directions, in degrees.
    public func separation(from other: HorizontalPosition) -> Double {
        let (a1, h1, a2, h2) = (azimuth * Sky.rad, altitude * Sky.rad, other.azimuth * Sky.rad, other.altitude * Sky.rad)
        let c = sin(h1) * sin(h2) + cos(h1) * cos(h2) * cos(a1 - a2)
        return acos(min(1, max(-1, c))) / Sky.rad
    }
}

/// Sky positions from a site and a UTC time: the sun (Meeus ch. 25, ~0.01°), the moon
/// (Meeus ch. 47, the truncated ELP series, with the observer's parallax) and fixed points
/// (J2000 precessed to the date, with nutation and annual aberration), then hour angle →
/// azimuth/altitude and atmospheric refraction (Saemundsson, 1010 hPa, 15 °C).
public enum Sky {
    public static let rad = Double.pi / 180

    /// Julian day (UT) of a Unix time.
    public static func julianDay(unixSeconds: Double) -> Double { unixSeconds / 86400 + 2_440_587.5 }

    /// TT − UT in seconds: Espenak and Meeus's polynomial for 2005–2050.
    public static func deltaT(julianDay: Double) -> Double {
        let year = 2000 + (julianDay - 2_451_544.5) / 365.25
        let t = year - 2000
        return 62.92 + 0.32217 * t + 0.005589 * t * t
    }

    /// Where `target` is seen from `site` at `unixSeconds` (UTC).
    public static func position(of target: SkyTarget, at unixSeconds: Double, site: Site, refraction: Bool = true) -> HorizontalPosition {
        let jd = julianDay(unixSeconds: unixSeconds)
        let T = (jd + deltaT(julianDay: jd) / 86400 - 2_451_545) / 36525
        let n = nutation(T)
        var ra: Double
        var dec: Double
        var parallaxSine = 0.0
        switch target {
        case .sun:
            let sun = sunPosition(T, nutation: n)
            (ra, dec) = (sun.ra, sun.dec)
            parallaxSine = sin(8.794 / 3600 * rad) / sun.distanceAU
        case .moon:
            let moon = moonPosition(T, nutation: n)
            (ra, dec) = (moon.ra, moon.dec)
            parallaxSine = 6378.14 / moon.distanceKm
        case .fixed(let ra0, let dec0):
            (ra, dec) = apparentPlace(raJ2000: ra0, decJ2000: dec0, T: T, nutation: n)
        }
        // Greenwich apparent sidereal time (Meeus 12.4 + the equation of the equinoxes).
        let d = jd - 2_451_545
        let Tu = d / 36525
        let gmst = 280.46061837 + 360.98564736629 * d + 0.000387933 * Tu * Tu - Tu * Tu * Tu / 38_710_000
        let gast = gmst + n.dpsi * cos(n.eps * rad)
        var hourAngle = (gast + site.longitude - ra) * rad
        var decR = dec * rad
        let phi = site.latitude * rad
        if parallaxSine > 0 {
            // Topocentric place (Meeus ch. 40): the observer is not at the Earth's centre.
            let u = atan(0.99664719 * tan(phi))
            let h = site.elevationM / 6_378_140
            let rhoSin = 0.99664719 * sin(u) + h * sin(phi)
            let rhoCos = cos(u) + h * cos(phi)
            let dAlpha = atan2(-rhoCos * parallaxSine * sin(hourAngle), cos(decR) - rhoCos * parallaxSine * cos(hourAngle))
            decR = atan2((sin(decR) - rhoSin * parallaxSine) * cos(dAlpha), cos(decR) - rhoCos * parallaxSine * cos(hourAngle))
            hourAngle -= dAlpha
        }
        let altitude = asin(sin(phi) * sin(decR) + cos(phi) * cos(decR) * cos(hourAngle)) / rad
        let azimuth = atan2(sin(hourAngle), cos(hourAngle) * sin(phi) - tan(decR) * cos(phi)) / rad + 180
        return HorizontalPosition(
            azimuth: azimuth.truncatingRemainder(dividingBy: 360),
            altitude: refraction
                ? altitude + Self.refraction(trueAltitude: altitude, pressureHPa: site.refractionPressureHPa, temperatureC: site.refractionTemperatureC)
                : altitude)
    }

    /// Atmospheric refraction in degrees for a true altitude: Saemundsson's formula (for
    /// 1010 hPa and 10 °C) scaled by P/1010 · 283/(273 + T) (Meeus ch. 16); none below −2°
    /// (the formula does not hold there).
    public static func refraction(trueAltitude h: Double, pressureHPa: Double = 1010, temperatureC: Double = 10) -> Double {
        guard h > -2 else { return 0 }
        let arcmin = 1.02 / tan((h + 10.3 / (h + 5.11)) * rad) * (pressureHPa / 1010) * (283 / (273 + temperatureC))
        return max(0, arcmin) / 60
    }

    // MARK: Nutation

    public struct Nutation {
        /// In longitude and in obliquity, degrees; the true obliquity, degrees.
        var dpsi: Double
        var deps: Double
        var eps: Double
    }

    /// Meeus ch. 22, to 0.5″ in longitude and 0.1″ in obliquity.
    public static func nutation(_ T: Double) -> Nutation {
        let omega = (125.04452 - 1934.136261 * T) * rad
        let L = (280.4665 + 36000.7698 * T) * rad
        let Lm = (218.3165 + 481267.8813 * T) * rad
        let dpsi = (-17.20 * sin(omega) - 1.32 * sin(2 * L) - 0.23 * sin(2 * Lm) + 0.21 * sin(2 * omega)) / 3600
        let deps = (9.20 * cos(omega) + 0.57 * cos(2 * L) + 0.10 * cos(2 * Lm) - 0.09 * cos(2 * omega)) / 3600
        let eps0 = 23.43929111 - (46.8150 * T + 0.00059 * T * T - 0.001813 * T * T * T) / 3600
        return Nutation(dpsi: dpsi, deps: deps, eps: eps0 + deps)
    }

    // MARK: Sun

    /// The sun's apparent right ascension and declination (degrees), its distance, and its
    /// true longitude (for aberration).
    public static func sunPosition(_ T: Double, nutation n: Nutation) -> (ra: Double, dec: Double, distanceAU: Double, trueLongitude: Double) {
        let L0 = 280.46646 + 36000.76983 * T + 0.0003032 * T * T
        let M = (357.52911 + 35999.05029 * T - 0.0001537 * T * T) * rad
        let e = 0.016708634 - 0.000042037 * T - 0.0000001267 * T * T
        let C = (1.914602 - 0.004817 * T - 0.000014 * T * T) * sin(M) + (0.019993 - 0.000101 * T) * sin(2 * M) + 0.000289 * sin(3 * M)
        let trueLongitude = L0 + C
        let nu = M + C * rad
        let R = 1.000001018 * (1 - e * e) / (1 + e * cos(nu))
        // Apparent: aberration (−20.4898″/R) and nutation in longitude.
        let lambda = (trueLongitude - 20.4898 / 3600 / R + n.dpsi) * rad
        let eps = n.eps * rad
        let ra = atan2(cos(eps) * sin(lambda), cos(lambda)) / rad
        let dec = asin(sin(eps) * sin(lambda)) / rad
        return (ra, dec, R, trueLongitude)
    }

    // MARK: Moon

    public static func moonPosition(_ T: Double, nutation n: Nutation) -> (ra: Double, dec: Double, distanceKm: Double) {
        let T2 = T * T
        let T3 = T2 * T
        let T4 = T3 * T
        let Lp = 218.3164477 + 481267.88123421 * T - 0.0015786 * T2 + T3 / 538_841 - T4 / 65_194_000
        let D = (297.8501921 + 445267.1114034 * T - 0.0018819 * T2 + T3 / 545_868 - T4 / 113_065_000) * rad
        let M = (357.5291092 + 35999.0502909 * T - 0.0001536 * T2 + T3 / 24_490_000) * rad
        let Mp = (134.9633964 + 477198.8675055 * T + 0.0087414 * T2 + T3 / 69699 - T4 / 14_712_000) * rad
        let F = (93.2720950 + 483202.0175233 * T - 0.0036539 * T2 - T3 / 3_526_000 + T4 / 863_310_000) * rad
        let A1 = (119.75 + 131.849 * T) * rad
        let A2 = (53.09 + 479264.290 * T) * rad
        let A3 = (313.45 + 481266.484 * T) * rad
        let E = 1 - 0.002516 * T - 0.0000074 * T2
        func eccentricity(_ m: Int8) -> Double { abs(m) == 1 ? E : (abs(m) == 2 ? E * E : 1) }
        var sl = 0.0
        var sr = 0.0
        var sb = 0.0
        for (d, m, mp, f, l, r) in MoonTerms.longitudeDistance {
            let argument = Double(d) * D + Double(m) * M + Double(mp) * Mp + Double(f) * F
            sl += Double(l) * eccentricity(m) * sin(argument)
            sr += Double(r) * eccentricity(m) * cos(argument)
        }
        for (d, m, mp, f, b) in MoonTerms.latitude {
            sb += Double(b) * eccentricity(m) * sin(Double(d) * D + Double(m) * M + Double(mp) * Mp + Double(f) * F)
        }
        let LpR = Lp * rad
        sl += 3958 * sin(A1) + 1962 * sin(LpR - F) + 318 * sin(A2)
        sb += -2235 * sin(LpR) + 382 * sin(A3) + 175 * sin(A1 - F) + 175 * sin(A1 + F) + 127 * sin(LpR - Mp) - 115 * sin(LpR + Mp)
        let lambda = (Lp + sl / 1e6 + n.dpsi) * rad
        let beta = sb / 1e6 * rad
        let eps = n.eps * rad
        let ra = atan2(sin(lambda) * cos(eps) - tan(beta) * sin(eps), cos(lambda)) / rad
        let dec = asin(sin(beta) * cos(eps) + cos(beta) * sin(eps) * sin(lambda)) / rad
        return (ra, dec, 385000.56 + sr / 1000)
    }

    // MARK: Fixed points

    /// A J2000 place precessed to the date (Meeus 21.4), with nutation (23.1) and annual
    /// aberration (23.3, without the e-terms' 0.3″).
    public static func apparentPlace(raJ2000: Double, decJ2000: Double, T: Double, nutation n: Nutation) -> (ra: Double, dec: Double) {
        let zeta = (2306.2181 * T + 0.30188 * T * T + 0.017998 * T * T * T) / 3600 * rad
        let z = (2306.2181 * T + 1.09468 * T * T + 0.018203 * T * T * T) / 3600 * rad
        let theta = (2004.3109 * T - 0.42665 * T * T - 0.041833 * T * T * T) / 3600 * rad
        let a0 = raJ2000 * rad
        let d0 = decJ2000 * rad
        let A = cos(d0) * sin(a0 + zeta)
        let B = cos(theta) * cos(d0) * cos(a0 + zeta) - sin(theta) * sin(d0)
        let C = sin(theta) * cos(d0) * cos(a0 + zeta) + cos(theta) * sin(d0)
        let a = atan2(A, B) + z
        let d = asin(C)
        let eps = n.eps * rad
        let dpsi = n.dpsi * rad
        let deps = n.deps * rad
        var da = (cos(eps) + sin(eps) * sin(a) * tan(d)) * dpsi - cos(a) * tan(d) * deps
        var dd = sin(eps) * cos(a) * dpsi + sin(a) * deps
        let kappa = 20.49552 / 3600 * rad
        let sun = sunPosition(T, nutation: n).trueLongitude * rad
        da += -kappa * (cos(a) * cos(sun) * cos(eps) + sin(a) * sin(sun)) / cos(d)
        dd += -kappa * (cos(sun) * cos(eps) * (tan(eps) * cos(d) - sin(a) * sin(d)) + cos(a) * sin(d) * sin(sun))
        return ((a + da) / rad, (d + dd) / rad)
    }
}
