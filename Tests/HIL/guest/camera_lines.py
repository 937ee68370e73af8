"""Samples two gpio-sim output lines (sysfs sim_gpioN/value) as fast as it can and prints
every change as "SECONDS FOCUS SHUTTER" (monotonic clock), until the file STOP exists.
Usage: camera_lines.py SIM_SYS FOCUS_LINE SHUTTER_LINE STOP"""
import os
import sys
import time

sysfs, focus, shutter, stop = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
paths = [f"{sysfs}/sim_gpio{focus}/value", f"{sysfs}/sim_gpio{shutter}/value"]
fds = [os.open(p, os.O_RDONLY) for p in paths]
last = None
n = 0
while True:
    state = tuple(os.pread(fd, 4, 0).strip().decode() for fd in fds)
    if state != last:
        print("%.4f %s %s" % (time.monotonic(), state[0], state[1]), flush=True)
        last = state
    n += 1
    if n % 200 == 0 and os.path.exists(stop):
        break
