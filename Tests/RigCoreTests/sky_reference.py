"""Reference sky positions from PyEphem (an independent ephemeris: libastro, with its own
VSOP87/ELP theories), for SkyTests: one JSON line per sample.

    sky_reference.py COUNT SEED
    sky_reference.py suntimes LATITUDE LONGITUDE UNIX

Each sample: a random site (|latitude| <= 65, any longitude, 0-3000 m), a random UTC time in
2024-2030, and a body: the sun, the moon, or a fixed J2000 point (the galactic centre, Sirius,
Vega). Printed: the inputs and ephem's apparent topocentric azimuth/altitude (refraction in
the International Standard Atmosphere at the site's elevation, as rig assumes; or, with
    sky_reference.py refraction LATITUDE LONGITUDE ELEVATION PRESSURE TEMP UNIX...
the sun at the given air, for the refraction tests).
"""
import json
import math
import random
import sys

import ephem

FIXED = {"gc": (266.41684, -29.00781), "sirius": (101.287155, -16.716116), "vega": (279.234735, 38.783689)}
START = 1704067200  # 2024-01-01T00:00:00Z
END = 1924992000  # 2031-01-01T00:00:00Z


def standard_atmosphere(elevation):
    """ISA pressure (hPa) and temperature (C) at `elevation` metres."""
    return 1013.25 * (1 - 2.25577e-5 * elevation) ** 5.25588, 15 - 0.0065 * elevation


def refraction(lat, lon, elev, pressure, temp, unixes):
    """The sun's apparent and geometric altitude at each time, at the given air."""
    for unix in unixes:
        obs = ephem.Observer()
        obs.lat, obs.lon, obs.elevation = str(lat), str(lon), elev
        obs.pressure, obs.temp = pressure, temp
        obs.date = ephem.Date(36525 + (unix - 946728000) / 86400)
        sun = ephem.Sun()
        sun.compute(obs)
        apparent = math.degrees(sun.alt)
        obs.pressure = 0
        sun.compute(obs)
        print(json.dumps({"unix": unix, "alt": apparent, "geometric": math.degrees(sun.alt)}))


def sun_times(lat, lon, unix):
    """ephem's sunset and dusks after `unix` (the centre at the thresholds rig uses)."""
    obs = ephem.Observer()
    obs.lat, obs.lon, obs.elevation = str(lat), str(lon), 0
    obs.pressure = 0  # the thresholds include refraction, as rig's do
    obs.date = ephem.Date(36525 + (unix - 946728000) / 86400)
    out = {}
    for name, horizon in [("sunset", "-0.833"), ("civil dusk", "-6"), ("nautical dusk", "-12"), ("astronomical dusk", "-18")]:
        obs.horizon = horizon
        try:
            d = obs.next_setting(ephem.Sun(), use_center=True)
            out[name] = (float(d) - 36525) * 86400 + 946728000
        except (ephem.AlwaysUpError, ephem.NeverUpError):
            pass
    print(json.dumps(out))


def main():
    if sys.argv[1] == "suntimes":
        return sun_times(float(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]))
    if sys.argv[1] == "refraction":
        values = [float(a) for a in sys.argv[2:]]
        return refraction(*values[:5], values[5:])
    count, seed = int(sys.argv[1]), int(sys.argv[2])
    rng = random.Random(seed)
    for _ in range(count):
        lat = rng.uniform(-65, 65)
        lon = rng.uniform(-180, 180)
        elev = rng.uniform(0, 3000)
        unix = rng.uniform(START, END)
        body_name = rng.choice(["sun", "moon", "gc", "sirius", "vega"])
        obs = ephem.Observer()
        obs.lat, obs.lon, obs.elevation = str(lat), str(lon), elev
        obs.pressure, obs.temp = standard_atmosphere(elev)
        obs.date = ephem.Date(36525 + (unix - 946728000) / 86400)  # ephem counts days from 1899-12-31 12:00 UTC
        if body_name == "sun":
            body = ephem.Sun()
        elif body_name == "moon":
            body = ephem.Moon()
        else:
            ra, dec = FIXED[body_name]
            body = ephem.FixedBody()
            body._ra, body._dec, body._epoch = math.radians(ra), math.radians(dec), ephem.J2000
        body.compute(obs)
        sample = {"lat": lat, "lon": lon, "elev": elev, "unix": unix, "body": body_name,
                  "az": math.degrees(body.az), "alt": math.degrees(body.alt)}
        if body_name in FIXED:
            sample["ra"], sample["dec"] = FIXED[body_name]
        print(json.dumps(sample))


if __name__ == "__main__":
    main()
