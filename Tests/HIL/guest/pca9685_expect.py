#!/usr/bin/python3
"""Checks a PCA9685's registers (an `i2cdump -y BUS ADDR b` listing) against a rig file,
the pose it should have been left in, and the `rig play --trace` CSV.

  pca9685_expect.py RIG.json DUMP.txt TRACE.csv POSE_JSON

POSE_JSON: {"axis": final position} (the program's last pose, or the park position).
The arithmetic is the driver's (Sources/RigPCA9685/Chip/PCA9685Math.swift), written out
again here, independently of it:
  PRE_SCALE = round(osc / (4096 f)) - 1, clamped 3...255      (round = half away from zero)
  period_us = 4096 (PRE_SCALE + 1) / osc * 1e6
  counts    = round(pulse_us / period_us * 4096) (servo),  round(duty / 100 * 4096) (pwm)
              0 -> full off (OFF_H bit 4), >= 4096 -> full on (ON_H bit 4)
  registers = ON = phase, OFF = (phase + counts) & 4095; phase = 256 n with phaseStagger
An axis with "idle": "release" is left full off; unused channels are full off.
Prints one line per finding; exit 0 when everything matches.
"""
import csv, json, math, re, sys

def round_half_away(x):
    return math.floor(x + 0.5) if x >= 0 else -math.floor(-x + 0.5)

def parse_dump(path):
    regs = {}
    for line in open(path):
        m = re.match(r"^([0-9a-f]{2}):((?: [0-9a-fX]{2}){16})", line)
        if m:
            base = int(m.group(1), 16)
            for i, b in enumerate(m.group(2).split()):
                regs[base + i] = None if b == "XX" else int(b, 16)
    return regs

def pulse_for(axis, pos):
    if "calibration" in axis:
        pts = sorted((a, p) for a, p in axis["calibration"])
    else:
        p0, p1 = axis.get("pulseUs", [1000, 2000]); a0, a1 = axis.get("angleDeg", [-90, 90])
        pts = sorted([(a0, p0), (a1, p1)])
    angles = [a for a, _ in pts]; pulses = [p for _, p in pts]
    if axis.get("inverted"):
        lo, hi = min(pulses), max(pulses); pulses = [lo + hi - p for p in pulses]
    for i in range(1, len(angles)):
        if pos <= angles[i] or i == len(angles) - 1:
            a0, a1, q0, q1 = angles[i - 1], angles[i], pulses[i - 1], pulses[i]
            return q0 + (pos - a0) / (a1 - a0) * (q1 - q0)

def clamp_counts(exact):
    if not exact > 0: return 0
    if exact >= 4096: return 4096
    return round_half_away(exact)

def regs_for(counts, phase):
    if counts <= 0: return (0, 0x1000)
    if counts >= 4096: return (0x1000, 0)
    return (phase & 4095, (phase + counts) & 4095)

def main():
    rig = json.load(open(sys.argv[1])); regs = parse_dump(sys.argv[2]); pose = json.loads(sys.argv[4])
    out = rig["output"]; f = out.get("frequencyHz", 50); osc = out.get("oscillatorHz", 25e6)
    stagger = out.get("phaseStagger", False)
    ok = True
    def check(what, got, want):
        nonlocal ok
        good = got == want
        ok = ok and good
        print(f"{'ok  ' if good else 'BAD '} {what}: register {got!r}, expected {want!r}")

    prescale = int(min(max(round_half_away(osc / (4096 * f)) - 1, 3), 255))
    period = 4096 * (prescale + 1) / osc * 1e6
    print(f"frequency {f} Hz, oscillator {osc:.0f} Hz -> PRE_SCALE {prescale}, period {period:.3f} us")
    check("PRE_SCALE (0xFE)", regs.get(0xFE), prescale)
    # MODE1: AI set, SLEEP/ALLCALL/SUBx clear. i2c-stub is a plain register file: the RESTART
    # bit the wake sequence writes stays set there (a real chip clears it), so it is masked.
    m1 = regs.get(0x00)
    check("MODE1 (0x00) & 0x7F", None if m1 is None else m1 & 0x7F, 0x20)
    check("MODE2 (0x01)", regs.get(0x01), 0x04)

    # The trace's last row per channel: what the output sent last (after quantization).
    last = {}
    with open(sys.argv[3]) as t:
        for row in csv.DictReader(t):
            last[int(row["channel"])] = row
    used = {}
    for axis in rig["axes"]:
        ch = axis["channel"]; pos = pose[axis["name"]]
        if axis.get("kind", "servo") == "pwm":
            counts = clamp_counts(pos / 100 * 4096)
        else:
            counts = clamp_counts(pulse_for(axis, pos) / period * 4096)
        row = last.get(ch)
        if row is None:
            ok = False; print(f"BAD  channel {ch} ({axis['name']}): not in the trace")
        else:
            trace_counts = clamp_counts(float(row["pulse_us"]) / period * 4096)
            check(f"channel {ch} ({axis['name']}) last trace row {row['pulse_us']} us at {row['position_deg']} -> counts",
                  trace_counts, counts)
        if axis.get("idle", "hold") == "release":
            counts = 0
        used[ch] = (axis["name"], counts)
    for ch in range(16):
        name, counts = used.get(ch, ("unused", 0))
        r = 0x06 + 4 * ch
        vals = [regs.get(r + i) for i in range(4)]
        got = None if None in vals else (vals[0] | vals[1] << 8, vals[2] | vals[3] << 8)
        check(f"LED{ch} ON/OFF ({name}, {counts} counts)", got, regs_for(counts, 256 * ch if stagger else 0))
    print("ALL MATCH" if ok else "MISMATCH")
    sys.exit(0 if ok else 1)

main()
