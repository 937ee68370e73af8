#!/usr/bin/env python3
"""Runs Adafruit's PCA9685 driver on a fake I2C bus and prints what it programs, as JSON.

The Swift test suite "Agreement with Adafruit's PCA9685 driver" compares rig's driver
with this. No hardware and no Blinka board detection is needed: Adafruit's classes are
given a fake `busio.I2C`-like object that keeps a register file and counts bus bytes.

Needs (PyPI): adafruit-circuitpython-pca9685 adafruit-circuitpython-motor

    python3 adafruit_reference.py                  # prescale and counts, see reference()
    python3 adafruit_reference.py bus-bytes 50 16 100
        # bytes on the bus for 100 frames of 16 servos changing every frame, see bus_bytes()
    python3 adafruit_reference.py frames < frames.json
        # bytes and transactions per frame for given pulses, see frames(); `rig bench pca9685`
"""

import json
import sys

try:
    from adafruit_pca9685 import PCA9685
    from adafruit_motor import servo as adafruit_servo
except ImportError as error:  # the Swift test turns this into a failure with instructions
    print(f"missing Python package: {error}. Install with: "
          "python3 -m pip install adafruit-circuitpython-pca9685 adafruit-circuitpython-motor",
          file=sys.stderr)
    sys.exit(3)

FREQUENCIES_HZ = [50, 60, 200, 330]
PULSES_US = [500, 600, 750, 800, 1000, 1100, 1234.5, 1250, 1500, 1501, 1750, 1777, 2000, 2250, 2400, 2500]
DUTY_PERCENT = [1, 5, 10, 12.5, 25, 33.3, 50, 66.7, 75, 90, 99]
OSCILLATORS_HZ = [25_000_000, 26_075_000]


class FakeI2C:
    """Just enough of busio.I2C for adafruit_bus_device: a chip with auto-increment."""

    def __init__(self, address=0x40):
        self.address = address
        self.registers = bytearray(256)
        self.registers[0x00] = 0x11  # MODE1 at power-on
        self.registers[0xFE] = 0x1E  # PRE_SCALE at power-on
        self.transactions = 0
        self.bus_bytes = 0  # address bytes + data bytes, as rig's model counts them

    def try_lock(self):
        return True

    def unlock(self):
        pass

    def _check(self, address):
        if address != self.address:
            raise OSError(121, "Remote I/O error")

    def writeto(self, address, buffer, *, start=0, end=None):
        self._check(address)
        data = bytes(buffer[start:len(buffer) if end is None else end])
        self.transactions += 1
        self.bus_bytes += 1 + len(data)
        if data:
            register = data[0]
            for offset, byte in enumerate(data[1:]):
                self.registers[(register + offset) & 0xFF] = byte

    def readfrom_into(self, address, buffer, *, start=0, end=None):
        self._check(address)
        end = len(buffer) if end is None else end
        self.transactions += 1
        self.bus_bytes += 1 + (end - start)
        for i in range(start, end):
            buffer[i] = 0

    def writeto_then_readfrom(self, address, out_buffer, in_buffer, *, out_start=0, out_end=None, in_start=0, in_end=None):
        self._check(address)
        out = bytes(out_buffer[out_start:len(out_buffer) if out_end is None else out_end])
        in_end = len(in_buffer) if in_end is None else in_end
        self.transactions += 1
        self.bus_bytes += 1 + len(out) + 1 + (in_end - in_start)
        register = out[0]
        for i in range(in_start, in_end):
            in_buffer[i] = self.registers[(register + i - in_start) & 0xFF]

    def channel(self, n):
        base = 0x06 + 4 * n
        r = self.registers
        return {"on": r[base] | (r[base + 1] << 8), "off": r[base + 2] | (r[base + 3] << 8)}


def make_pca(frequency_hz, oscillator_hz):
    bus = FakeI2C()
    pca = PCA9685(bus, reference_clock_speed=oscillator_hz)
    pca.frequency = frequency_hz
    return bus, pca


def reference():
    """For each oscillator and frequency: the PRE_SCALE Adafruit programs, and the
    LEDn_ON/OFF registers for each pulse width (through adafruit_motor's Servo, the usual
    servo path: duty = int(pulse × frequency / 1e6 × 0xFFFF), then >> 4) and each duty
    cycle (duty_cycle = int(percent / 100 × 0xFFFF))."""
    results = []
    for oscillator_hz in OSCILLATORS_HZ:
        for frequency_hz in FREQUENCIES_HZ:
            bus, pca = make_pca(frequency_hz, oscillator_hz)
            entry = {"oscillatorHz": oscillator_hz, "frequencyHz": frequency_hz,
                     "prescale": bus.registers[0xFE], "pulses": [], "duties": []}
            period_us = 1e6 / pca.frequency
            for pulse in PULSES_US:
                if pulse >= period_us:
                    continue
                s = adafruit_servo.Servo(pca.channels[0], min_pulse=pulse, max_pulse=pulse + 1000)
                s.fraction = 0.0
                entry["pulses"].append({"pulseUs": pulse, **bus.channel(0)})
            for percent in DUTY_PERCENT:
                pca.channels[1].duty_cycle = int(percent / 100 * 0xFFFF)
                entry["duties"].append({"percent": percent, **bus.channel(1)})
            results.append(entry)
    return results


def bus_bytes(frequency_hz=50, channels=16, frames=100, oscillator_hz=25_000_000):
    """Bytes on the bus (address + register + data, as rig's model counts) that Adafruit's
    driver sends for `frames` frames of `channels` servos that all move every frame: it
    writes each channel in its own transaction (address, register, 4 data bytes) every
    time it is set, changed or not. Setup (init, frequency, Servo objects) not counted."""
    bus, pca = make_pca(frequency_hz, oscillator_hz)
    servos = [adafruit_servo.Servo(pca.channels[n], min_pulse=1000, max_pulse=2000) for n in range(channels)]
    bus.transactions = 0
    bus.bus_bytes = 0
    for frame in range(frames):
        for n, s in enumerate(servos):
            s.fraction = ((frame + n) % 100) / 100
    return {"frequencyHz": frequency_hz, "channels": channels, "frames": frames,
            "transactions": bus.transactions, "busBytes": bus.bus_bytes,
            "busBytesPerFrame": bus.bus_bytes / frames}


def frames(request):
    """Bytes and transactions per frame that Adafruit's driver sends when its user sets
    every servo each frame, the way its examples and the Servo class do:
    `pca.channels[n].duty_cycle = int(pulse_us × frequency / 1e6 × 0xFFFF)` (what
    `Servo.angle`/`fraction` end in), 0 for an output that is off. `request`:
    {"frequencyHz", "oscillatorHz", "channels": [n, …], "frames": [[pulse_us or null, …], …]}."""
    bus, pca = make_pca(request["frequencyHz"], request.get("oscillatorHz", 25_000_000))
    frequency = pca.frequency
    per_frame = []
    for pulses in request["frames"]:
        bus.transactions = 0
        bus.bus_bytes = 0
        for n, pulse in zip(request["channels"], pulses):
            duty = 0 if pulse is None else min(0xFFFF, int(pulse * frequency / 1e6 * 0xFFFF))
            pca.channels[n].duty_cycle = duty
        per_frame.append([bus.bus_bytes, bus.transactions])
    return {"perFrame": per_frame}


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "frames":
        print(json.dumps(frames(json.load(sys.stdin))))
    elif len(sys.argv) > 1 and sys.argv[1] == "bus-bytes":
        args = [float(sys.argv[2]) if len(sys.argv) > 2 else 50,
                int(sys.argv[3]) if len(sys.argv) > 3 else 16,
                int(sys.argv[4]) if len(sys.argv) > 4 else 100]
        print(json.dumps(bus_bytes(*args)))
    else:
        print(json.dumps(reference()))
