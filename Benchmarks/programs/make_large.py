#!/usr/bin/env python3
"""Writes the large files `rig check` and `rig plan` are measured on (docs/performance.md):

    python3 Benchmarks/programs/make_large.py keyframes 1000000 > /tmp/keyframes-1m.json
    python3 Benchmarks/programs/make_large.py panorama > /tmp/panorama-10k.json

keyframes N: a pan/tilt program of N keyframes in all (N/2 per axis), 0.02 s apart,
linear segments through a slow wave (20° of pan, 10° of tilt, about 8 s a cycle) that
starts and ends at rest: feasible, so the check plays every one of its N/2 × 2 ticks at 100 Hz.
panorama: a long lens over the whole circle and ±75° of tilt: 9,998 shots (rig allows 10,000).
"""
import math
import sys

RIG = ('{"name": "bench pan/tilt", "loopRateHz": 100, "output": {"type": "sim"}, "axes": ['
       '{"name": "pan", "channel": 0, "pulseUs": [500, 2500], "angleDeg": [-180, 180], "softLimits": [-180, 180], '
       '"maxVelocity": 120, "maxAcceleration": 360}, '
       '{"name": "tilt", "channel": 1, "pulseUs": [500, 2500], "angleDeg": [-90, 90], "softLimits": [-90, 90], '
       '"maxVelocity": 90, "maxAcceleration": 270}]}')


def keyframes(total):
    per_axis = total // 2
    out = sys.stdout
    out.write('{"rig": %s, "kind": "keyframes", "keyframes": {\n' % RIG)
    duration = (per_axis - 1) * 0.02
    period = duration / max(1, round(duration / 8))
    for n, (name, amplitude) in enumerate((("pan", 20.0), ("tilt", 10.0))):
        out.write('"%s": [' % name)
        for k in range(per_axis):
            t = k * 0.02
            value = amplitude * (1 - math.cos(2 * math.pi * t / period)) / 2
            out.write('%s{"t": %.2f, "value": %.6f, "interp": "linear"}' % ("" if k == 0 else ", ", t, value))
        out.write(']%s\n' % ("," if n == 0 else ""))
    out.write('}}\n')


def panorama():
    sys.stdout.write('{"rig": %s, "kind": "panorama", "trigger": "auto", "settleSeconds": 0.2, '
                     '"panorama": {"lens": {"horizontalFovDeg": 3.3, "verticalFovDeg": 2.2}, "overlapPercent": 25, '
                     '"pan": [-180, 180], "tilt": [-75, 75]}}\n' % RIG)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "keyframes":
        keyframes(int(sys.argv[2]) if len(sys.argv) > 2 else 1_000_000)
    elif len(sys.argv) > 1 and sys.argv[1] == "panorama":
        panorama()
    else:
        sys.exit(__doc__)
