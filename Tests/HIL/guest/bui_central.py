#!/usr/bin/python3
"""Plays Cascable's side of "Basic User Input" (REFERENCE §1) as a GATT central through the
real bluetoothd: finds the peripheral advertising the BUI service from ADAPTER, connects,
checks the five characteristics, subscribes to Continue Button State and runs ROUNDS
Wait-For-Input rounds in Cascable's order:

    Stop Available 0, Continue Available 0, User Message, Continue Available 1,
    ← Continue Button State 0x01 then 0x00 (a press and a release), Continue Available 0

  bui_central.py ADAPTER ROUNDS [--type request|command] [--timeout S] [--forget]
                 [--trace CSV] [--malformed] [--reconnect-after K] [--end PID]
                 [--nudge hciN]

  --trace CSV          with "waiting" and each notification, the pose in the rig's trace
                       (its last row per axis: where the rig stands at that moment)
  --malformed          before the rounds, write 2 bytes to Continue Available (the answer
                       is logged; nothing may be notified for it)
  --reconnect-after K  after round K: disconnect, forget, discover and connect again
  --end PID            after the rounds, one more wait (the one after the last step): the
                       rig, process PID, must end without a press
  --nudge hciN         the peripheral's controller (btvirt): while discovery finds nothing,
                       its advertising set is switched off and on again every 2 s (see
                       `nudge`)

Prints one JSON line per event ({"t": monotonic, "event": …}) so a check can put them in
order against a trace; exit 0 when every round got its press and release, in order.
Used by check_bluetooth.sh against bui_peripheral.py (a stand-in for the rig), and meant
for bui_body.sh against `rig play --trigger bui`.
"""
import json, sys, time
import dbus, dbus.mainloop.glib
from gi.repository import GLib

SVC = "9a43142a-f619-41ff-945d-527023ef5b9d"
CHARS = {
    "message": ("deff81cc-0f74-4e86-ba01-f5d34e1c33e6", {"write", "write-without-response"}),
    "continue_available": ("941680a1-a4d9-48df-927b-2e19870f8085", {"write", "write-without-response"}),
    "stop_available": ("fd64c111-356f-4968-85c2-2dd979e3878e", {"write", "write-without-response"}),
    "continue_state": ("eb366ce4-1952-4a55-a319-7e27a865554a", {"read", "notify"}),
    "stop_state": ("a83173e8-9546-4d91-a736-b087ae514321", {"read", "notify"}),
}
PROPS, OM = "org.freedesktop.DBus.Properties", "org.freedesktop.DBus.ObjectManager"
ADAPTER = sys.argv[1]; ROUNDS = int(sys.argv[2])
WTYPE = sys.argv[sys.argv.index("--type") + 1] if "--type" in sys.argv else "request"
TIMEOUT = float(sys.argv[sys.argv.index("--timeout") + 1]) if "--timeout" in sys.argv else 120

dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
bus = dbus.SystemBus(); loop = GLib.MainLoop()
om = dbus.Interface(bus.get_object("org.bluez", "/"), OM)


TRACE = sys.argv[sys.argv.index("--trace") + 1] if "--trace" in sys.argv else None
NUDGE = sys.argv[sys.argv.index("--nudge") + 1] if "--nudge" in sys.argv else None
RECONNECT = int(sys.argv[sys.argv.index("--reconnect-after") + 1]) if "--reconnect-after" in sys.argv else None


def pose():
    """The rig's trace: the last position per axis (it is flushed every 20 ms)."""
    last = {}
    try:
        with open(TRACE) as f:
            for line in f.read().splitlines()[1:]:
                p = line.split(",")
                if len(p) >= 5:
                    last[p[1]] = round(float(p[4]), 2)
    except (OSError, ValueError):
        pass
    return last


def emit(event, **kw):
    if TRACE and event in ("waiting", "notified", "end-wait", "malformed"):
        kw["pose"] = pose()
    print(json.dumps({"t": round(time.monotonic(), 3), "event": event, **kw}), flush=True)


def fail(why):
    emit("fail", why=why); sys.exit(1)


def run_until(cond, timeout, what):
    """Runs the GLib loop (signals are delivered) until cond() or the timeout."""
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            fail(f"timed out after {timeout:.0f}s waiting for {what}")
        GLib.timeout_add(50, loop.quit); loop.run()


ad = bus.get_object("org.bluez", ADAPTER)
dbus.Interface(ad, PROPS).Set("org.bluez.Adapter1", "Powered", dbus.Boolean(True))
a1 = dbus.Interface(ad, "org.bluez.Adapter1")
states = []
watched = {}
found = {}
chars = {}
dev = None


def changed(iface, props, invalidated, path=None):
    # Only bluetoothd's remote-characteristic objects under the device: the peripheral's own
    # objects (the rig's, on the same system bus) broadcast PropertiesChanged too.
    if iface == "org.bluez.GattCharacteristic1" and "Value" in props and path in watched:
        v = bytes(props["Value"])
        states.append((watched[path], v))
        emit("notified", characteristic=watched[path], value=v.hex())
bus.add_signal_receiver(changed, signal_name="PropertiesChanged", dbus_interface=PROPS, bus_name="org.bluez",
                        path_keyword="path")


def nudge():
    """btvirt reports an advertising set once (when it is enabled or a scan starts) and the
    kernel drops a report that comes before its discovery is under way, so the one report
    of a scan's start is often lost under TCG (CI: 120 s, 5 rescans, nothing found). The
    peripheral's set switched off and on (`bt_nudge` in lib.sh) is the next advertising
    event a radio would send. See docs/hil.md ("Discovery against btvirt")."""
    import os, subprocess
    subprocess.run(["sh", os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib.sh"), "nudge", NUDGE],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60)
    emit("nudged", controller=NUDGE)


def connect_all(again=False):
    global dev
    watched.clear()
    if "--forget" in sys.argv or again:
        # Forget devices this adapter saw before: a cached device's UUIDs are only updated
        # when its advertising data is parsed again, a new one is announced with them at once.
        for p, ifs in om.GetManagedObjects().items():
            d = ifs.get("org.bluez.Device1")
            if d and d["Adapter"] == ADAPTER:
                a1.RemoveDevice(p); emit("forgot", path=str(p))
    a1.SetDiscoveryFilter({"Transport": "le"}); a1.StartDiscovery()
    found.clear()
    def scan():
        for p, ifs in om.GetManagedObjects().items():
            d = ifs.get("org.bluez.Device1")
            if d and d["Adapter"] == ADAPTER and SVC in [str(u).lower() for u in d.get("UUIDs", [])]:
                found.update(path=p, name=str(d.get("Name", d.get("Alias", ""))), address=str(d["Address"]))
                return True
        return False
    # Discovery under way first (the kernel keeps reports only then); then, while nothing is
    # found, a nudge every 2 s (see `nudge`), and a new scan every 20 s (it resets the
    # controller's duplicate filter). The deadline stays TIMEOUT.
    t0 = restarted = time.monotonic()
    run_until(lambda: bool(dbus.Interface(ad, PROPS).Get("org.bluez.Adapter1", "Discovering")), TIMEOUT, "discovery to start")
    emit("scanning")
    nudged = time.monotonic()
    while not scan():
        now = time.monotonic()
        if now - t0 > TIMEOUT:
            fail(f"timed out after {TIMEOUT:.0f}s waiting for a device advertising the BUI service")
        if NUDGE and now - nudged > 2:
            nudge(); nudged = time.monotonic()
        if now - restarted > 20:
            try:
                a1.StopDiscovery()
            except dbus.DBusException:
                pass
            a1.StartDiscovery(); restarted = now; emit("rescan")
        GLib.timeout_add(50, loop.quit); loop.run()
    a1.StopDiscovery()
    emit("discovered", **found)
    dev = bus.get_object("org.bluez", found["path"])
    dbus.Interface(dev, "org.bluez.Device1").Connect(timeout=60)
    run_until(lambda: bool(dbus.Interface(dev, PROPS).Get("org.bluez.Device1", "ServicesResolved")), 60, "ServicesResolved")
    emit("connected")

    chars.clear()
    for p, ifs in om.GetManagedObjects().items():
        c = ifs.get("org.bluez.GattCharacteristic1")
        if p.startswith(found["path"] + "/") and c:
            for key, (uuid, flags) in CHARS.items():
                if str(c["UUID"]).lower() == uuid:
                    missing = flags - {str(f) for f in c["Flags"]}
                    if missing:
                        fail(f"{key} lacks flags {sorted(missing)} (has {sorted(str(f) for f in c['Flags'])})")
                    chars[key] = dbus.Interface(bus.get_object("org.bluez", p), "org.bluez.GattCharacteristic1")
                    chars[key + "_path"] = p
    if any(k not in chars for k in CHARS):
        fail(f"missing characteristics: {[k for k in CHARS if k not in chars]}")
    for key in ("continue_state", "stop_state"):
        v = bytes(chars[key].ReadValue({}))
        emit("read", characteristic=key, value=v.hex())
        if v != b"\x00":
            fail(f"{key} reads {v.hex()}, expected 00")

    # ReadValue makes bluetoothd set Value (a PropertiesChanged) on its objects too; those
    # signals are already queued when the call returns: let them go by before watching.
    while GLib.MainContext.default().iteration(False):
        pass
    watched.update({chars["continue_state_path"]: "continue", chars["stop_state_path"]: "stop"})
    chars["continue_state"].StartNotify(); chars["stop_state"].StartNotify()
    run_until(lambda: bool(dbus.Interface(bus.get_object("org.bluez", chars["continue_state_path"]), PROPS)
                           .Get("org.bluez.GattCharacteristic1", "Notifying")), 30, "Notifying")
    emit("subscribed")


connect_all()



def write(key, data):
    chars[key].WriteValue(dbus.ByteArray(data), {"type": WTYPE})
    emit("wrote", characteristic=key, value=data.hex())


if "--malformed" in sys.argv:
    # 2 bytes where one is expected: refused (an error) or ignored, never acted on.
    n = len(states)
    try:
        chars["continue_available"].WriteValue(dbus.ByteArray(b"\x01\x00"), {"type": "request"})
        answer = "accepted"
    except dbus.DBusException as e:
        answer = e.get_dbus_name() or str(e)
    emit("malformed", answer=answer)


def prepare(k):
    """Cascable's order before Continue Available 1 (User Message zero-length once)."""
    write("stop_available", b"\x00")
    write("continue_available", b"\x00")
    write("message", b"" if k == 0 else f"HIL round {k + 1}".encode())


for k in range(ROUNDS):
    prepare(k)
    n = len(states)
    emit("waiting", round=k + 1)
    write("continue_available", b"\x01")
    run_until(lambda: [v for w, v in states[n:] if w == "continue"][:2] == [b"\x01", b"\x00"]
              or len([1 for w, _ in states[n:] if w == "continue"]) >= 2, TIMEOUT, f"press + release in round {k + 1}")
    got = [v for w, v in states[n:] if w == "continue"][:2]
    if got != [b"\x01", b"\x00"]:
        fail(f"round {k + 1}: Continue Button State went {[g.hex() for g in got]}, expected 01 then 00")
    if any(w == "stop" for w, _ in states[n:]):
        fail(f"round {k + 1}: Stop Button State was notified while Stop Available was 0")
    emit("pressed", round=k + 1)
    write("continue_available", b"\x00")
    if RECONNECT == k + 1:
        dbus.Interface(dev, "org.bluez.Device1").Disconnect()
        run_until(lambda: not bool(dbus.Interface(dev, PROPS).Get("org.bluez.Device1", "Connected")), 60, "disconnected")
        emit("disconnected")
        connect_all(again=True)
if "--end" in sys.argv:
    # The wait after the last step: the rig (process PID) ends its program; no press comes.
    prepare(ROUNDS)
    n = len(states)
    emit("end-wait")
    try:
        write("continue_available", b"\x01")
    except dbus.DBusException as e:
        emit("write-error", error=str(e))
    rig_pid = int(sys.argv[sys.argv.index("--end") + 1])
    def rig_ended():  # gone, or a zombie its parent (the check) has not waited for yet
        try:
            return open(f"/proc/{rig_pid}/stat").read().rsplit(")", 1)[1].split()[0] in "ZX"
        except OSError:
            return True
    run_until(rig_ended, TIMEOUT, f"the rig (pid {rig_pid}) to end its program")
    if [1 for w, _ in states[n:]]:
        fail(f"notified after the last wait: {[(w, v.hex()) for w, v in states[n:]]}")
    emit("ended")
try:
    dbus.Interface(dev, "org.bluez.Device1").Disconnect()
except dbus.DBusException as e:
    emit("disconnect-error", error=str(e))
emit("done", rounds=ROUNDS, notifications=len(states))
