#!/usr/bin/python3
"""A phone for `rig pair` through the real bluetoothd (check_bui_pair.sh):

  bui_pair_central.py ADAPTER write accepted|refused [--nudge hciN]
      find the rig's BUI service from ADAPTER, connect, write Continue Available 0x01 with
      response; exit 0 when the outcome is the expected one
  bui_pair_central.py ADAPTER pair PASSKEY_FILE [--nudge hciN]
      register a KeyboardDisplay agent (a phone), find the rig, connect and Device1.Pair;
      the passkey asked for is read from PASSKEY_FILE (rig pair's output: "passkey for …:
      NNNNNN"); exit 0 once Paired

One JSON line per event.
"""
import json, os, re, subprocess, sys, time
import dbus, dbus.mainloop.glib, dbus.service
from gi.repository import GLib

SVC = "9a43142a-f619-41ff-945d-527023ef5b9d"
CONTINUE_AVAILABLE = "941680a1-a4d9-48df-927b-2e19870f8085"
PROPS, OM = "org.freedesktop.DBus.Properties", "org.freedesktop.DBus.ObjectManager"
ADAPTER, MODE, ARG = sys.argv[1], sys.argv[2], sys.argv[3]
NUDGE = sys.argv[sys.argv.index("--nudge") + 1] if "--nudge" in sys.argv else None
TIMEOUT = 120

dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
bus = dbus.SystemBus(); loop = GLib.MainLoop()
om = dbus.Interface(bus.get_object("org.bluez", "/"), OM)
ad = bus.get_object("org.bluez", ADAPTER)
a1 = dbus.Interface(ad, "org.bluez.Adapter1")


def emit(event, **kw):
    print(json.dumps({"t": round(time.monotonic(), 3), "event": event, **kw}), flush=True)


def fail(why):
    emit("fail", why=why); sys.exit(1)


def spin(ms=50):
    GLib.timeout_add(ms, loop.quit); loop.run()


def run_until(cond, timeout, what):
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            fail(f"timed out after {timeout:.0f}s waiting for {what}")
        spin()


def find_rig():
    """Discovery under way first, then a nudge of the rig's advertising set every 2 s while
    nothing is found (docs/hil.md, "Discovery against btvirt")."""
    for p, ifs in om.GetManagedObjects().items():
        d = ifs.get("org.bluez.Device1")
        if d and d["Adapter"] == ADAPTER and not d.get("Paired", False):
            a1.RemoveDevice(p)
    a1.SetDiscoveryFilter({"Transport": "le"}); a1.StartDiscovery()
    run_until(lambda: bool(dbus.Interface(ad, PROPS).Get("org.bluez.Adapter1", "Discovering")), TIMEOUT, "discovery")
    t0 = nudged = time.monotonic()
    while True:
        for p, ifs in om.GetManagedObjects().items():
            d = ifs.get("org.bluez.Device1")
            if d and d["Adapter"] == ADAPTER and SVC in [str(u).lower() for u in d.get("UUIDs", [])]:
                a1.StopDiscovery()
                emit("discovered", path=str(p), address=str(d["Address"]))
                return str(p)
        if time.monotonic() - t0 > TIMEOUT:
            fail("no device advertising the BUI service")
        if NUDGE and time.monotonic() - nudged > 2:
            subprocess.run(["sh", os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib.sh"), "nudge", NUDGE],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60)
            nudged = time.monotonic()
        spin()


def connect(path):
    dev = bus.get_object("org.bluez", path)
    dbus.Interface(dev, "org.bluez.Device1").Connect(timeout=60)
    run_until(lambda: bool(dbus.Interface(dev, PROPS).Get("org.bluez.Device1", "ServicesResolved")), 60, "ServicesResolved")
    emit("connected")
    return dev


class Phone(dbus.service.Object):
    """A phone's agent: it has a keyboard, so the rig (DisplayOnly) shows and we type."""

    @dbus.service.method("org.bluez.Agent1", in_signature="o", out_signature="u",
                         async_callbacks=("ok", "err"))
    def RequestPasskey(self, device, ok, err):
        emit("passkey-asked", device=str(device))
        deadline = time.monotonic() + 60
        def look():
            try:
                m = re.findall(r"passkey for [^:]+(?::[0-9A-F]{2})*: (\d{6})", open(ARG).read())
            except OSError:
                m = []
            if m:
                emit("passkey-typed", passkey=m[-1]); ok(dbus.UInt32(int(m[-1]))); return False
            if time.monotonic() > deadline:
                err(dbus.DBusException("no passkey shown", name="org.bluez.Error.Rejected")); return False
            return True
        GLib.timeout_add(100, look)

    @dbus.service.method("org.bluez.Agent1", in_signature="ou", out_signature="")
    def RequestConfirmation(self, device, passkey):
        emit("confirmation-asked", passkey=int(passkey))

    @dbus.service.method("org.bluez.Agent1", in_signature="o", out_signature="")
    def RequestAuthorization(self, device):
        emit("authorization-asked")

    @dbus.service.method("org.bluez.Agent1", in_signature="ouq", out_signature="")
    def DisplayPasskey(self, device, passkey, entered):
        emit("display-passkey", passkey=int(passkey))

    @dbus.service.method("org.bluez.Agent1", in_signature="", out_signature="")
    def Release(self):
        pass

    @dbus.service.method("org.bluez.Agent1", in_signature="", out_signature="")
    def Cancel(self):
        emit("cancelled")


if MODE == "write":
    path = find_rig()
    dev = connect(path)
    char = None
    for p, ifs in om.GetManagedObjects().items():
        c = ifs.get("org.bluez.GattCharacteristic1")
        if p.startswith(path + "/") and c and str(c["UUID"]).lower() == CONTINUE_AVAILABLE:
            char = dbus.Interface(bus.get_object("org.bluez", p), "org.bluez.GattCharacteristic1")
            emit("flags", flags=[str(f) for f in c["Flags"]])
    if char is None:
        fail("no Continue Available characteristic")
    try:
        char.WriteValue(dbus.Array([dbus.Byte(1)], signature="y"), {}, timeout=60)
        outcome = "accepted"
    except dbus.DBusException as e:
        outcome = "refused"; emit("error", name=e.get_dbus_name(), message=e.get_dbus_message())
    emit("write", outcome=outcome)
    try:
        dbus.Interface(dev, "org.bluez.Device1").Disconnect()
    except dbus.DBusException:
        pass
    sys.exit(0 if outcome == ARG else 1)

if MODE == "pair":
    Phone(bus, "/hil/phone")
    am = dbus.Interface(bus.get_object("org.bluez", "/org/bluez"), "org.bluez.AgentManager1")
    am.RegisterAgent("/hil/phone", "KeyboardDisplay")
    path = find_rig()
    dev = connect(path)
    result = {}
    dbus.Interface(dev, "org.bluez.Device1").Pair(
        reply_handler=lambda: result.update(ok=True),
        error_handler=lambda e: result.update(ok=False, error=str(e)), timeout=90)
    run_until(lambda: result, 100, "Pair")
    if not result["ok"]:
        fail(f"Pair: {result['error']}")
    paired = bool(dbus.Interface(dev, PROPS).Get("org.bluez.Device1", "Paired"))
    emit("paired", paired=paired)
    try:
        dbus.Interface(dev, "org.bluez.Device1").Disconnect()
    except dbus.DBusException:
        pass
    sys.exit(0 if paired else 1)
fail(f"unknown mode {MODE}")
