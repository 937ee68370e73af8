#!/usr/bin/env python3
"""The reference loop `rig bench loop --compare python` measures rig against.

This is how most servo scripts pace themselves: compute the pose, send it, then
`next += period; time.sleep(max(0, next - time.monotonic()))`. Each tick computes a
two-axis smooth (cubic Hermite) pose, about what rig's step function does for a
pan/tilt program, and writes it to a list standing in for the servo driver.

Lateness is measured the way rig measures it: how long after its deadline the loop
woke, on CLOCK_MONOTONIC, in 1 µs buckets (a percentile is the upper edge of its
bucket, capped at the maximum); a wake-up a whole period or more late is a missed
tick. CPU time is this thread's (time.thread_time_ns). Prints one JSON object:

  {"ticks": N, "missed": N, "lateness_us": {"p50": x, "p99": x, "p999": x, "max": x},
   "cpu_us_per_tick": x}

Usage: sleep_loop.py --rate HZ --seconds S
"""
import argparse
import json
import math
import sys
import time


def percentile_us(buckets, count, max_ns, fraction):
    """Same rule as rig's LatencyStats.percentileMicroseconds."""
    if count == 0:
        return 0.0
    target = max(1, math.ceil(count * fraction))
    seen = 0
    for micros in sorted(buckets):
        seen += buckets[micros]
        if seen >= target:
            return min(float(micros) + 1, max_ns / 1000)
    return max_ns / 1000


def smooth(t, t0, t1, v0, v1):
    """Cubic Hermite with zero end tangents: a smooth rest-to-rest segment."""
    u = (t - t0) / (t1 - t0)
    u2 = u * u
    u3 = u2 * u
    return (2 * u3 - 3 * u2 + 1) * v0 + (-2 * u3 + 3 * u2) * v1


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rate", type=float, required=True, help="loop rate in Hz")
    parser.add_argument("--seconds", type=float, required=True, help="how long to run")
    args = parser.parse_args()
    if args.rate <= 0 or args.seconds <= 0:
        parser.error("--rate and --seconds must be positive")

    period_ns = round(1e9 / args.rate)
    ticks = max(1, round(args.rate * args.seconds))
    segment = 2.0  # seconds per keyframe segment, alternating ±30°
    pose = [0.0, 0.0]
    sent = []

    buckets = {}
    count = 0
    missed = 0
    max_ns = 0
    cpu_start = time.thread_time_ns()
    start = time.monotonic_ns()
    next_deadline = start
    for tick in range(1, ticks + 1):
        next_deadline += period_ns
        time.sleep(max(0, (next_deadline - time.monotonic_ns()) / 1e9))
        woke = time.monotonic_ns()
        late = max(0, woke - next_deadline)
        micros = min(late // 1000, 99_999)
        buckets[micros] = buckets.get(micros, 0) + 1
        count += 1
        max_ns = max(max_ns, late)
        if late >= period_ns:
            missed += 1

        t = tick / args.rate
        k = int(t // segment)
        v0 = 0.0 if k == 0 else (30.0 if k % 2 else -30.0)
        v1 = 30.0 if k % 2 == 0 else -30.0
        pose[0] = smooth(t, k * segment, (k + 1) * segment, v0, v1)
        pose[1] = smooth(t, k * segment, (k + 1) * segment, v0 / 2, v1 / 2)
        sent.append((pose[0], pose[1]))
        if len(sent) > 64:
            sent.clear()
    cpu_ns = time.thread_time_ns() - cpu_start

    json.dump({
        "ticks": count,
        "missed": missed,
        "lateness_us": {
            "p50": percentile_us(buckets, count, max_ns, 0.5),
            "p99": percentile_us(buckets, count, max_ns, 0.99),
            "p999": percentile_us(buckets, count, max_ns, 0.999),
            "max": max_ns / 1000,
        },
        "cpu_us_per_tick": cpu_ns / count / 1000,
    }, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
