#!/usr/bin/python3
# A BLEControl board for the real bluetoothd (python3-dbus + GLib), after
# Tests/RigBLEControlTests/fake_blecontrol_board.py (the bluezoo one): a GATT application on
# ADAPTER with service FFE0 and characteristic FFE1 (read, write, write-without-response,
# notify), an LE advertisement of FFE0 under NAME, and every write decoded like the STM32
# firmware (commands framed by their length byte, several whole commands per write).
#
#   blecontrol_board.py /org/bluez/hci0 NAME LOG [--reply-unknown-once] [--seconds S]
#
# LOG gets one JSON line per event: {"event": "ready"}, every write ({"event": "write",
# "via": "request"|"command", "bytes": [...]}), every decoded command, and every violation
# of what the firmware tolerates ({"event": "violation"}): a write over 20 bytes, a command
# split across writes, anything packed after INIT, an unknown command, a channel >= 8, a
# value > 1000. "via" is WriteValue's "type" option ("-" when bluetoothd gives none, as
# Debian 12's 5.66 does for an external server). No AcquireWrite here: bluetoothd delivers the central's ATT writes through
# WriteValue with the type it received ("command" for write-without-response, whichever
# way the central sent them; the central's own AcquireWrite is a client-side socket).
import json, sys, time
import dbus, dbus.service, dbus.mainloop.glib
from gi.repository import GLib

ADAPTER, NAME, LOG = sys.argv[1], sys.argv[2], sys.argv[3]
REPLY_UNKNOWN = "--reply-unknown-once" in sys.argv
SECONDS = int(sys.argv[sys.argv.index("--seconds") + 1]) if "--seconds" in sys.argv else 600
MAX_WRITE = 20
NAMES = {0: "INIT", 1: "ANALOG_OUT_EN", 2: "SERVO_VAL", 3: "PWM_VAL", 4: "LCD_TEXT", 5: "LCD_CLEAR"}
GATT_CHR = "org.bluez.GattCharacteristic1"
PROPS = "org.freedesktop.DBus.Properties"

dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
bus = dbus.SystemBus()
logf = open(LOG, "a", buffering=1)


def log(**entry):
    entry["t"] = time.monotonic()
    logf.write(json.dumps(entry) + "\n")


def violation(what):
    log(event="violation", what=what)


class Application(dbus.service.Object):
    def __init__(self):
        self.path = "/hil/board"; super().__init__(bus, self.path); self.objs = []

    @dbus.service.method("org.freedesktop.DBus.ObjectManager", out_signature="a{oa{sa{sv}}}")
    def GetManagedObjects(self):
        return {o.path: o.props() for o in self.objs}


class Service(dbus.service.Object):
    def __init__(self, path):
        self.path = path; super().__init__(bus, path)

    def props(self):
        return {"org.bluez.GattService1": {"UUID": "0000ffe0-0000-1000-8000-00805f9b34fb", "Primary": True}}


class Char(dbus.service.Object):
    def __init__(self, path, svc):
        self.path = path; self.svc = svc; self.value = b""; self.notifying = False
        self.reply_unknown = REPLY_UNKNOWN
        super().__init__(bus, path)

    def props(self):
        return {GATT_CHR: {"UUID": "0000ffe1-0000-1000-8000-00805f9b34fb", "Service": dbus.ObjectPath(self.svc),
                           "Flags": dbus.Array(["read", "write", "write-without-response", "notify"], signature="s")}}

    @dbus.service.method(GATT_CHR, in_signature="a{sv}", out_signature="ay")
    def ReadValue(self, options):
        return dbus.Array([dbus.Byte(b) for b in self.value], signature="y")

    @dbus.service.method(GATT_CHR, in_signature="aya{sv}")
    def WriteValue(self, value, options):
        # bluetoothd 5.66 passes "device", "link", "mtu" (and "offset"), not always "type".
        self.receive(bytes(value), str(options.get("type", "-")), sorted(str(k) for k in options))

    @dbus.service.method(GATT_CHR)
    def StartNotify(self):
        self.notifying = True; log(event="start-notify")

    @dbus.service.method(GATT_CHR)
    def StopNotify(self):
        self.notifying = False; log(event="stop-notify")

    @dbus.service.signal(PROPS, signature="sa{sv}as")
    def PropertiesChanged(self, interface, changed, invalidated):
        pass

    def notify(self, data):
        log(event="notify", bytes=list(data), subscribed=self.notifying)
        if self.notifying:
            self.value = data
            self.PropertiesChanged(GATT_CHR, {"Value": dbus.Array([dbus.Byte(b) for b in data], signature="y")}, [])

    def receive(self, data, via, options=()):
        log(event="write", via=via, options=list(options), bytes=list(data))
        if len(data) > MAX_WRITE:
            violation(f"write of {len(data)} bytes > {MAX_WRITE}")
        i = 0
        after_init = False
        while i < len(data):
            if i + 1 >= len(data) or i + 2 + data[i + 1] > len(data):
                violation(f"command split across writes: {list(data[i:])}")
                return
            cmd, length = data[i], data[i + 1]
            payload = data[i + 2:i + 2 + length]
            if after_init:
                violation(f"{NAMES.get(cmd, cmd)} packed after INIT")
            entry = {"event": "command", "via": via, "cmd": cmd, "name": NAMES.get(cmd, "unknown")}
            if cmd == 0:
                after_init = True
                if i != 0:
                    violation("INIT packed after another command")
            elif cmd in (1, 2, 3):
                if length != (2 if cmd == 1 else 3):
                    violation(f"{NAMES[cmd]} with length {length}")
                entry["channel"] = payload[0] if payload else None
                if payload and payload[0] >= 8:
                    violation(f"channel {payload[0]} >= 8")
                if cmd == 1 and len(payload) == 2:
                    entry["enable"] = payload[1]
                if cmd in (2, 3) and len(payload) == 3:
                    entry["value"] = payload[1] << 8 | payload[2]
                    if entry["value"] > 1000:
                        violation(f"value {entry['value']} > 1000")
            elif cmd == 4:
                entry["line"] = payload[0] if payload else None
            elif cmd == 5:
                pass
            else:
                violation(f"unknown command {cmd}")
            log(**entry)
            if cmd in (2, 3) and self.reply_unknown:
                # The firmware's answer to a command it does not know: the rig logs it, goes on.
                self.reply_unknown = False
                self.notify(bytes([0xFF, 0x01, 0x07]))
            i += 2 + length


class Adv(dbus.service.Object):
    def __init__(self):
        self.path = "/hil/boardadv"; super().__init__(bus, self.path)

    @dbus.service.method(PROPS, in_signature="s", out_signature="a{sv}")
    def GetAll(self, iface):
        return {"Type": "peripheral", "ServiceUUIDs": dbus.Array(["FFE0"], signature="s"),
                "LocalName": NAME, "Discoverable": dbus.Boolean(True)}

    @dbus.service.method("org.bluez.LEAdvertisement1")
    def Release(self):
        pass


app = Application(); svc = Service("/hil/board/service0"); ch = Char("/hil/board/service0/char0", svc.path)
app.objs = [svc, ch]; adv = Adv()
ad = bus.get_object("org.bluez", ADAPTER)
dbus.Interface(ad, PROPS).Set("org.bluez.Adapter1", "Powered", dbus.Boolean(True))
loop = GLib.MainLoop()
pending = {"GATT app", "advertisement"}


def ok(what):
    def done(*a):
        pending.discard(what)
        print("board:", what, "registered", flush=True)
        if not pending:
            log(event="ready")
    return done


def err(what):
    return lambda e: (print("board:", what, "FAILED", e, flush=True), log(event="error", what=f"{what}: {e}"), loop.quit())


dbus.Interface(ad, "org.bluez.GattManager1").RegisterApplication(app.path, {}, reply_handler=ok("GATT app"), error_handler=err("GATT app"))
dbus.Interface(ad, "org.bluez.LEAdvertisingManager1").RegisterAdvertisement(adv.path, {}, reply_handler=ok("advertisement"), error_handler=err("advertisement"))
GLib.timeout_add_seconds(SECONDS, loop.quit)
loop.run()
