#!/usr/bin/python3
"""Drives `rig jog` with a virtual gamepad made through /dev/uinput (raw ioctls, no
python3-evdev), and checks what it did.

  gamepad_jog.py record RIG BIN WORKDIR   record keys with A, save with Start, check them
  gamepad_jog.py unplug RIG BIN WORKDIR   unplug mid-move: the rig stops and waits for a pad

Every wait is a bounded poll on an event the rig produces (its log, its trace, the saved
program): nothing assumes how fast the emulated machine is.
"""
import csv, fcntl, glob, json, os, struct, subprocess, sys, time

UI_SET_EVBIT, UI_SET_KEYBIT, UI_SET_ABSBIT = 0x40045564, 0x40045565, 0x40045567
UI_DEV_SETUP, UI_ABS_SETUP, UI_DEV_CREATE, UI_DEV_DESTROY = 0x405c5503, 0x401c5504, 0x5501, 0x5502
EV_SYN, EV_KEY, EV_ABS = 0, 1, 3
BTN_SOUTH, BTN_EAST, BTN_NORTH, BTN_WEST, BTN_TL, BTN_TR, BTN_SELECT, BTN_START = \
    0x130, 0x131, 0x133, 0x134, 0x136, 0x137, 0x13a, 0x13b
ABS_X, ABS_Y, ABS_RX, ABS_RY = 0, 1, 3, 4
TIMEOUT = float(os.environ.get("HIL_WAIT", "60"))   # per wait; TCG is slow, never a pass/fail criterion


def log(*a):
    print(f"[{time.monotonic():9.2f}]", *a, flush=True)


class Pad:
    """An Xbox-360-like pad: both sticks (-32768…32767) and the standard buttons."""
    def __init__(self, name):
        self.name = name.encode()
        self.fd = os.open("/dev/uinput", os.O_WRONLY | os.O_NONBLOCK)
        fcntl.ioctl(self.fd, UI_SET_EVBIT, EV_KEY)
        fcntl.ioctl(self.fd, UI_SET_EVBIT, EV_ABS)
        for b in (BTN_SOUTH, BTN_EAST, BTN_NORTH, BTN_WEST, BTN_TL, BTN_TR, BTN_SELECT, BTN_START, 0x13c, 0x13d, 0x13e):
            fcntl.ioctl(self.fd, UI_SET_KEYBIT, b)
        for a in (ABS_X, ABS_Y, ABS_RX, ABS_RY):
            fcntl.ioctl(self.fd, UI_SET_ABSBIT, a)
            # struct uinput_abs_setup: code, pad, input_absinfo(value, min, max, fuzz, flat, resolution)
            fcntl.ioctl(self.fd, UI_ABS_SETUP, struct.pack("HH6i", a, 0, 0, -32768, 32767, 16, 128, 0))
        # struct uinput_setup: input_id(bustype, vendor, product, version), name[80], ff_effects_max
        fcntl.ioctl(self.fd, UI_DEV_SETUP, struct.pack("4H80sI", 0x03, 0x045e, 0x028e, 0x110, self.name, 0))
        fcntl.ioctl(self.fd, UI_DEV_CREATE)
        self.node = wait("the uinput device node", self._node, 10)
        log("pad created:", self.node)

    def _node(self):
        for n in glob.glob("/sys/class/input/event*/device/name"):
            if open(n, "rb").read().strip() == self.name:
                node = "/dev/input/" + n.split("/")[4]
                if os.path.exists(node):
                    return node
        return None

    def emit(self, *events):
        for t, c, v in events:
            os.write(self.fd, struct.pack("llHHi", 0, 0, t, c, v))
        os.write(self.fd, struct.pack("llHHi", 0, 0, EV_SYN, 0, 0))

    def stick(self, x=None, y=None):
        ev = []
        if x is not None: ev.append((EV_ABS, ABS_X, x))
        if y is not None: ev.append((EV_ABS, ABS_Y, y))
        self.emit(*ev)

    def press(self, button):
        self.emit((EV_KEY, button, 1))
        self.emit((EV_KEY, button, 0))

    def destroy(self):
        fcntl.ioctl(self.fd, UI_DEV_DESTROY)
        os.close(self.fd)
        log("pad destroyed (unplugged)")


def wait(what, cond, timeout=TIMEOUT):
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        v = cond()
        if v:
            return v
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")


class Rig:
    def __init__(self, args, workdir, tag):
        self.logpath = os.path.join(workdir, f"jog-{tag}.log")
        self.logf = open(self.logpath, "w")
        log("starting:", " ".join(args))
        self.p = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=self.logf, stderr=subprocess.STDOUT)

    def text(self):
        return open(self.logpath, errors="replace").read()

    def count(self, s):
        return self.text().count(s)

    def wait_log(self, s, n=1):
        def cond():
            if self.p.poll() is not None and self.count(s) < n:
                raise AssertionError(f"rig exited ({self.p.returncode}) before logging {s!r}:\n{self.text()}")
            return self.count(s) >= n
        wait(f"{s!r} in the rig's log", cond)

    def exit_code(self, timeout=TIMEOUT):
        try:
            return self.p.wait(timeout)
        except subprocess.TimeoutExpired:
            self.p.kill()
            raise AssertionError("rig did not exit")


def read_trace(path):
    """{axis: [(t, pulse, pos), …]} from a trace CSV (a partly written last line is dropped)."""
    rows = {}
    try:
        text = open(path).read()
    except FileNotFoundError:
        return rows
    lines = text.split("\n")
    if not text.endswith("\n"):
        lines = lines[:-1]
    for r in csv.DictReader(lines):
        try:
            rows.setdefault(r["axis"], []).append((float(r["time_s"]), float(r["pulse_us"]), float(r["position_deg"])))
        except (TypeError, ValueError):
            pass
    return rows


def pos(trace_path, axis):
    rows = read_trace(trace_path).get(axis)
    return rows[-1][2] if rows else None


def at_rest(trace_path, axis, ticks=30):
    """The last `ticks` rows of the axis have one position (the loop runs on; the axis does not)."""
    rows = read_trace(trace_path).get(axis, [])
    return len(rows) > ticks and len({r[2] for r in rows[-ticks:]}) == 1


def check_limits(rig, trace_path):
    """Every traced position inside the soft limits, every step within maxVelocity."""
    trace = read_trace(trace_path)
    problems = []
    for a in rig["axes"]:
        rows = trace.get(a["name"], [])
        lo, hi = a["softLimits"]
        out = [r for r in rows if not (lo - 1e-3 <= r[2] <= hi + 1e-3)]
        if out:
            problems.append(f"{a['name']}: {len(out)} rows outside {lo}…{hi}, e.g. {out[0]}")
        vmax = a["maxVelocity"]
        fast = []
        for (t0, _, p0), (t1, _, p1) in zip(rows, rows[1:]):
            if t1 > t0 and abs(p1 - p0) / (t1 - t0) > vmax * 1.02 + 0.01 / (t1 - t0):
                fast.append((t0, p0, t1, p1))
        if fast:
            problems.append(f"{a['name']}: {len(fast)} steps faster than {vmax}/s, e.g. {fast[0]}")
        log(f"trace {a['name']}: {len(rows)} rows, range {min(r[2] for r in rows):.3f}…{max(r[2] for r in rows):.3f}"
            if rows else f"trace {a['name']}: no rows")
        if not rows:
            problems.append(f"{a['name']}: no trace rows")
    return problems


def record(rig_path, rig_bin, work):
    rig = json.load(open(rig_path))
    out = os.path.join(work, "programs", "jogged.json")   # a subdirectory: the rig path must be made relative
    os.makedirs(os.path.dirname(out), exist_ok=True)
    trace = os.path.join(work, "jog-record.csv")
    pad = Pad("HIL Virtual Gamepad")
    r = Rig([rig_bin, "jog", "--rig", rig_path, "--device", pad.node, "--record", out, "--trace", trace,
             "--no-keyboard"], work, "record")
    r.wait_log("gamepad: HIL Virtual Gamepad (")
    wait("trace rows", lambda: pos(trace, "pan") is not None)

    def keys():
        try:
            return json.load(open(out))
        except (FileNotFoundError, ValueError):
            return None

    def nkeys():
        k = keys()
        return len(k["keyframes"]["pan"]) if k and "keyframes" in k else 0

    poses = []
    def record_here(n):
        wait("pan and tilt at rest", lambda: at_rest(trace, "pan") and at_rest(trace, "tilt"))
        poses.append((pos(trace, "pan"), pos(trace, "tilt")))
        pad.press(BTN_SOUTH)
        wait(f"the program file with {n} keys", lambda: nkeys() >= n)
        log(f"recorded key {n} at pan/tilt {poses[-1]}")

    record_here(1)                                   # at home
    pad.stick(x=32767, y=-32767)                     # right and up: pan +, tilt + (Y inverted)
    wait("pan ≥ 10°", lambda: (pos(trace, "pan") or 0) >= 10)
    pad.stick(x=0, y=0)
    record_here(2)
    pad.stick(x=-32767)                              # back left, past home
    wait("pan ≤ -5°", lambda: (pos(trace, "pan") or 0) <= -5)
    pad.stick(x=0)
    record_here(3)
    # Y previews the recording: its player is built by the session's thread from the rest
    # pose; the rig goes back through key 2 and ends at key 3, where it rests now.
    before = len(read_trace(trace).get("pan", []))
    pad.press(BTN_NORTH)
    r.wait_log("preview: playing the recording")
    r.wait_log("preview ended")
    during = [p for _, _, p in read_trace(trace).get("pan", [])[before:]]
    previewed = bool(during) and max(during) >= poses[1][0] - 0.5 and abs(during[-1] - poses[2][0]) < 0.05
    log(f"preview: pan {min(during, default=None)}…{max(during, default=None)}, ended at {during[-1] if during else None}")
    pad.press(BTN_START)                             # save and end
    rc = r.exit_code()
    log(f"rig jog exited {rc}")
    print(r.text())
    pad.destroy()

    problems = []
    if rc != 0:
        problems.append(f"rig jog exit {rc}")
    problems += check_limits(rig, trace)
    if not previewed:
        problems.append(f"the preview did not go back through key 2 {poses[1]} and end at key 3 {poses[2]}")
    prog = keys()
    print("recorded program:", json.dumps(prog))
    if not prog:
        problems.append("no program file")
    else:
        if prog.get("kind") != "keyframes":
            problems.append(f"kind {prog.get('kind')!r}")
        rig_ref = prog.get("rig")
        if not isinstance(rig_ref, str) or os.path.realpath(os.path.join(os.path.dirname(out), rig_ref)) != os.path.realpath(rig_path):
            problems.append(f"rig reference {rig_ref!r} does not resolve to {rig_path} from {out}")
        kf = prog.get("keyframes", {})
        for i, name in enumerate(("pan", "tilt")):
            ks = kf.get(name, [])
            vals = [k.get("value") for k in ks]
            want = [p[i] for p in poses]
            if len(ks) != 3 or any(v is None or abs(v - w) > 0.01 for v, w in zip(vals, want)):
                problems.append(f"{name} keys {vals}, expected the rest poses {want}")
            ts = [k.get("t") for k in ks]
            if ts and (ts[0] != 0 or any(b is None or a is None or b - a < 2 - 1e-9 for a, b in zip(ts, ts[1:]))):
                problems.append(f"{name} key times {ts}: expected 0 then ≥ 2 s (--spacing default) apart")
        if not (poses[1][0] >= 10 and poses[1][1] > 0 and poses[2][0] <= -5):
            problems.append(f"rest poses {poses} are not where the stick drove the rig")
        chk = subprocess.run([rig_bin, "check", out], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        print(f"rig check {out} → exit {chk.returncode}\n{chk.stdout}")
        if chk.returncode != 0:
            problems.append(f"rig check on the recording: exit {chk.returncode}")
    return problems, f"3 keys at pan/tilt {[(round(a, 2), round(b, 2)) for a, b in poses]}, previewed by Y (through key 2, ended at key 3), saved by Start, rig check exit 0"


def unplug(rig_path, rig_bin, work):
    rig = json.load(open(rig_path))
    pan_hi = rig["axes"][0]["softLimits"][1]
    trace = os.path.join(work, "jog-unplug.csv")
    pad = Pad("HIL Virtual Gamepad")
    # No --device: the session finds the pad by its capabilities.
    r = Rig([rig_bin, "jog", "--rig", rig_path, "--trace", trace, "--no-keyboard"], work, "unplug")
    r.wait_log("gamepad: HIL Virtual Gamepad (")
    wait("trace rows", lambda: pos(trace, "pan") is not None)
    pad.stick(x=32767)
    wait("pan ≥ 5° (moving)", lambda: (pos(trace, "pan") or 0) >= 5)
    moving_at = pos(trace, "pan")
    pad.destroy()                                    # mid-move, the stick still deflected
    r.wait_log(" lost (")
    wait("the rig at rest after the unplug", lambda: at_rest(trace, "pan", ticks=50))
    stopped_at = pos(trace, "pan")
    log(f"unplugged at pan ≥ {moving_at}, stopped at {stopped_at}")
    problems = []
    if r.p.poll() is not None:
        problems.append(f"rig jog exited ({r.p.returncode}) after the unplug; docs/jog.md says it waits for a gamepad")
    # The rig must not have gone on to the soft limit (where the deflected stick would take it).
    if not stopped_at < pan_hi - 5:
        problems.append(f"pan stopped at {stopped_at}, at the soft limit {pan_hi}: the unplug did not stop it")
    # Still at rest while no pad is there: no motion without input.
    n_rows = len(read_trace(trace).get("pan", []))
    wait("60 more ticks in the trace", lambda: len(read_trace(trace).get("pan", [])) >= n_rows + 60)
    if pos(trace, "pan") != stopped_at:
        problems.append(f"pan moved on without a pad: {stopped_at} → {pos(trace, 'pan')}")
    # A new pad is picked up and works: Back ends the session.
    pad2 = Pad("HIL Virtual Gamepad")
    r.wait_log("gamepad: HIL Virtual Gamepad (", 2)   # "(": not the "… lost" line
    pad2.press(BTN_SELECT)
    rc = r.exit_code()
    print(r.text())
    pad2.destroy()
    if rc != 0:
        problems.append(f"rig jog exit {rc} after Back")
    problems += check_limits(rig, trace)
    rows = read_trace(trace).get("pan", [])
    if not at_rest(trace, "pan", ticks=30) or rows[-1][2] != stopped_at:
        problems.append(f"the trace does not end at rest at {stopped_at}: last {rows[-3:]}")
    return problems, f"moving at ≥ {moving_at}°, stopped at {stopped_at}° (limit {pan_hi}), waited for a pad, new pad + Back → exit 0"


if __name__ == "__main__":
    mode, rig_path, rig_bin, work = sys.argv[1:5]
    try:
        problems, summary = {"record": record, "unplug": unplug}[mode](rig_path, rig_bin, work)
    except AssertionError as e:
        problems, summary = [str(e)], ""
    for p in problems:
        print("PROBLEM:", p, flush=True)
    print("SUMMARY:", summary if not problems else "; ".join(problems), flush=True)
    sys.exit(1 if problems else 0)
