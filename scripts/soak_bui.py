"""The soak run behind scripts/soak-bui (see there)."""
import asyncio, json, os, subprocess, sys, tempfile, time

from dbus_fast import BusType
from dbus_fast.aio import MessageBus

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VENV_BIN = os.path.join(ROOT, ".build-venv", "bin")


def program(cycles):
    # cycles + 1 steps: step 1 is reached at start, each press moves to the next one, and
    # the wait after the last step ends the program (no press), as in the e2e test.
    steps = [{"pose": {"pan": (2 if i % 2 else -2), "tilt": 0}} for i in range(cycles + 1)]
    return {
        "rig": {
            "name": "bui soak",
            "output": {"type": "sim"},
            "stepSync": {"name": "rigsoak", "pressMs": 50, "requirePairing": False},
            "axes": [
                {"name": "pan", "channel": 0, "maxVelocity": 400, "maxAcceleration": 4000},
                {"name": "tilt", "channel": 1, "maxVelocity": 400, "maxAcceleration": 4000},
            ],
        },
        "kind": "steps",
        "trigger": "bui",
        "settleSeconds": 0,
        "steps": steps,
    }


def rss_kb(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


async def wait_for_bluez(address):
    bus = await MessageBus(bus_address=address, bus_type=BusType.SYSTEM).connect()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            intro = await bus.introspect("org.bluez", "/")
            obj = bus.get_proxy_object("org.bluez", "/", intro)
            managed = await obj.get_interface("org.freedesktop.DBus.ObjectManager").call_get_managed_objects()
            if all("org.bluez.GattManager1" in managed.get(p, {}) for p in ("/org/bluez/hci0", "/org/bluez/hci1")):
                bus.disconnect()
                return
        except Exception:
            pass
        await asyncio.sleep(0.1)
    raise RuntimeError("bluezoo did not come up within 60 s")


def main():
    cycles = int(sys.argv[1]) if len(sys.argv) > 1 else 10000
    rig = os.environ.get("RIG", os.path.join(ROOT, ".build", "debug", "rig"))
    work = os.environ.get("SOAK_DIR") or tempfile.mkdtemp(prefix="rig-soak-")
    os.makedirs(work, exist_ok=True)
    program_path = os.path.join(work, "soak.json")
    log_path = os.path.join(work, "cascable.jsonl")
    with open(program_path, "w") as f:
        json.dump(program(cycles), f)

    children = []
    daemon = subprocess.Popen(["dbus-daemon", "--session", "--print-address", "--nofork"],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    children.append(daemon)
    address = daemon.stdout.readline().strip()
    env = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=address, DBUS_SESSION_BUS_ADDRESS=address,
               PATH=VENV_BIN + ":" + os.environ.get("PATH", ""))
    try:
        children.append(subprocess.Popen([os.path.join(VENV_BIN, "bluezoo"), "--auto-enable",
                                          "-a", "00:00:00:11:11:11", "-a", "00:00:00:22:22:22"],
                                         env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        asyncio.run(wait_for_bluez(address))

        started = time.monotonic()
        rig_out = open(os.path.join(work, "rig.out"), "w")
        rig_err = open(os.path.join(work, "rig.err"), "w")
        rig_proc = subprocess.Popen([rig, "play", program_path, "--adapter", "hci0", "--no-realtime"], env=env,
                                    stdout=rig_out, stderr=rig_err, stdin=subprocess.DEVNULL)
        children.append(rig_proc)
        sim = subprocess.Popen([os.path.join(VENV_BIN, "python3"), os.path.join(ROOT, "Tests/RigStepSyncTests/cascable_sim.py"),
                                "--adapter", "hci1", "--waits", str(cycles + 1), "--log", log_path, "--press-timeout", "30"],
                               env=env, stdout=subprocess.DEVNULL, stderr=open(os.path.join(work, "sim.err"), "w"))
        children.append(sim)

        # RSS after the first press (warmed up) and the last sample before the program ends.
        rss_start = rss_end = None
        presses = 0
        last_report = time.monotonic()
        while sim.poll() is None:
            time.sleep(1)
            try:
                with open(log_path) as f:
                    presses = sum(1 for line in f if '"pressed"' in line)
            except OSError:
                pass
            rss = rss_kb(rig_proc.pid)
            if rss is not None and presses >= 1:
                if rss_start is None:
                    rss_start = rss
                rss_end = rss
            if time.monotonic() - last_report >= 30:
                last_report = time.monotonic()
                print(f"soak: {presses}/{cycles} cycles, RSS {rss} kB", flush=True)
        try:
            rig_status = rig_proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            rig_proc.terminate()
            rig_status = rig_proc.wait(timeout=30)
        wall = time.monotonic() - started

        entries = [json.loads(line) for line in open(log_path)]
        pressed = [e for e in entries if e["event"] == "pressed"]
        clean = [e for e in pressed if e.get("states") == [1, 0]]
        downs = sum(1 for e in entries if e["event"] == "notify" and e.get("char") == "continue" and e.get("value") == 1)
        no_press = [e for e in entries if e["event"] == "no-press"]
        lost = cycles - len(clean)
        double = max(0, downs - cycles)
        print(f"cycles: {cycles}")
        print(f"presses: {len(clean)} clean, lost or odd: {lost}, double: {double}, final wait without press: {len(no_press)}")
        print(f"rig RSS: start {rss_start} kB, end {rss_end} kB")
        print(f"wall time: {wall:.1f} s ({wall / max(cycles, 1) * 1000:.0f} ms per cycle)")
        print(f"rig exit: {rig_status}, simulator exit: {sim.returncode}")
        print(f"files: {work}")
        return 0 if lost == 0 and double == 0 and rig_status == 0 and sim.returncode == 0 else 1
    finally:
        for child in reversed(children):
            if child.poll() is None:
                child.terminate()
                try:
                    child.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    child.kill()


if __name__ == "__main__":
    sys.exit(main())
