import FoundationEssentials
import Glibc

extension Sky {
    /// The clear, moonless sky's light on the ground by the sun's geometric altitude:
    /// (degrees, log10 of the horizontal illuminance in lux), after the usual tables
    /// (about 730 lx at sunset, 3.4 lx at −6°, 0.008 lx at −12°, starlight and airglow
    /// below −18°).
    public static let clearSkyTable: [(altitude: Double, log10Lux: Double)] = [
        (-90, -3.3), (-18, -3.3), (-15, -3.0), (-12, -2.1), (-10, -1.2), (-8, -0.4), (-6, 0.53), (-4, 1.5), (-2, 2.3), (0, 2.86), (2, 3.25),
        (5, 3.6), (10, 4.0), (20, 4.4), (30, 4.65), (60, 4.95), (90, 5.05),
    ]

    /// The clear-sky twilight curve: the EV100 a landscape lit by the clear, moonless sky
    /// meters at with the sun at `altitude` (geometric degrees), log2(lux / 2.5) (an
    /// incident meter's calibration). About 12 with the sun 10° up, 8.2 at sunset, 0.4 at
    /// −6°, −8 at −12°, −12.3 from −18° down. Monotone and smooth (a monotone cubic through
    /// the table: no step anywhere, −2° included).
    public static func clearSkyEV(sunAltitude altitude: Double) -> Double {
        let table = clearSkyTable
        let a = min(max(altitude, table[0].altitude), table[table.count - 1].altitude)
        var i = 0
        while i < table.count - 2, a > table[i + 1].altitude { i += 1 }
        // Fritsch–Carlson tangents: the mean of the neighbouring secants, zero at an extremum.
        func secant(_ k: Int) -> Double { (table[k + 1].log10Lux - table[k].log10Lux) / (table[k + 1].altitude - table[k].altitude) }
        func tangent(_ k: Int) -> Double {
            if k == 0 { return secant(0) }
            if k == table.count - 1 { return secant(k - 1) }
            let (s0, s1) = (secant(k - 1), secant(k))
            return s0 * s1 <= 0 ? 0 : 2 / (1 / s0 + 1 / s1)
        }
        let h = table[i + 1].altitude - table[i].altitude
        let u = (a - table[i].altitude) / h
        let (y0, y1) = (table[i].log10Lux, table[i + 1].log10Lux)
        let (m0, m1) = (tangent(i) * h, tangent(i + 1) * h)
        let u2 = u * u
        let u3 = u2 * u
        let lux10 = (2 * u3 - 3 * u2 + 1) * y0 + (u3 - 2 * u2 + u) * m0 + (-2 * u3 + 3 * u2) * y1 + (u3 - u2) * m1
        return lux10 / log10(2) - log2(2.5)
    }
}
