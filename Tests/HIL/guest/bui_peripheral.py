#!/usr/bin/python3
"""A stand-in for the rig's BUI peripheral (REFERENCE §1), registered with the real bluetoothd
on ADAPTER: the BUI service with its five characteristics and an LE advertisement. When
Continue Available becomes 1 while a central is subscribed to Continue Button State, it
"presses" the continue button: notifies 0x01, then 0x00 100 ms later (as Cascable's Mac
example). It checks the infrastructure the real feature needs (notifications and writes
through bluetoothd); it is not the feature.

  bui_peripheral.py ADAPTER SECONDS
"""
import sys, time
import dbus, dbus.service, dbus.mainloop.glib
from gi.repository import GLib

ADAPTER = sys.argv[1]; LIFETIME = int(sys.argv[2]) if len(sys.argv) > 2 else 120
SVC = "9A43142A-F619-41FF-945D-527023EF5B9D"
PROPS = "org.freedesktop.DBus.Properties"
GC = "org.bluez.GattCharacteristic1"
dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
bus = dbus.SystemBus(); loop = GLib.MainLoop()


def log(*a):
    print(f"[{time.monotonic():9.2f}] peripheral:", *a, flush=True)


class App(dbus.service.Object):
    def __init__(self):
        self.path = "/hil/bui"; super().__init__(bus, self.path); self.objs = []
    @dbus.service.method("org.freedesktop.DBus.ObjectManager", out_signature="a{oa{sa{sv}}}")
    def GetManagedObjects(self):
        return {o.path: o.props() for o in self.objs}


class Service(dbus.service.Object):
    def __init__(self, path):
        self.path = path; super().__init__(bus, path)
    def props(self):
        return {"org.bluez.GattService1": {"UUID": SVC, "Primary": True}}
    @dbus.service.method(PROPS, in_signature="s", out_signature="a{sv}")
    def GetAll(self, iface):
        return self.props().get(iface, {})


class Char(dbus.service.Object):
    def __init__(self, path, svc, name, uuid, flags, on_write=None):
        self.path, self.svc, self.name, self.uuid, self.flags = path, svc, name, uuid, flags
        self.value = [dbus.Byte(0)]; self.notifying = False; self.on_write = on_write
        super().__init__(bus, path)
    def props(self):
        return {GC: {"UUID": self.uuid, "Service": dbus.ObjectPath(self.svc), "Flags": dbus.Array(self.flags, signature="s")}}
    @dbus.service.method(PROPS, in_signature="s", out_signature="a{sv}")
    def GetAll(self, iface):
        return self.props().get(iface, {})
    @dbus.service.method(GC, in_signature="a{sv}", out_signature="ay")
    def ReadValue(self, options):
        log(self.name, "read ->", bytes(self.value).hex()); return self.value
    @dbus.service.method(GC, in_signature="aya{sv}")
    def WriteValue(self, value, options):
        log(self.name, "written", bytes(value).hex() or "(empty)", dict((str(k), str(v)) for k, v in options.items() if k != "device"))
        if self.on_write: self.on_write(bytes(value))
    @dbus.service.method(GC)
    def StartNotify(self):
        self.notifying = True; log(self.name, "StartNotify")
    @dbus.service.method(GC)
    def StopNotify(self):
        self.notifying = False; log(self.name, "StopNotify")
    @dbus.service.signal(PROPS, signature="sa{sv}as")
    def PropertiesChanged(self, iface, changed, invalidated):
        pass
    def notify(self, b):
        self.value = [dbus.Byte(b)]
        if self.notifying:
            self.PropertiesChanged(GC, {"Value": dbus.Array(self.value, signature="y")}, [])
        log(self.name, "notify", f"{b:02x}", "(sent)" if self.notifying else "(nobody subscribed)")


class Adv(dbus.service.Object):
    def __init__(self):
        self.path = "/hil/bui/adv0"; super().__init__(bus, self.path)
    @dbus.service.method(PROPS, in_signature="s", out_signature="a{sv}")
    def GetAll(self, iface):
        return {"Type": "peripheral", "ServiceUUIDs": dbus.Array([SVC], signature="s"), "LocalName": "HIL rig"}
    @dbus.service.method("org.bluez.LEAdvertisement1")
    def Release(self): pass


def release():
    cont_state.notify(0)
    return False

def press():
    cont_state.notify(1)
    GLib.timeout_add(100, release)
    return False

def continue_available(v):
    if v == b"\x01" and cont_state.notifying:
        GLib.timeout_add(200, press)

app = App(); svc = Service("/hil/bui/svc0"); w = ["write", "write-without-response"]; rn = ["read", "notify"]
cont_state = Char(svc.path + "/c3", svc.path, "continue-state", "EB366CE4-1952-4A55-A319-7E27A865554A", rn)
app.objs = [svc,
            Char(svc.path + "/c0", svc.path, "message", "DEFF81CC-0F74-4E86-BA01-F5D34E1C33E6", w),
            Char(svc.path + "/c1", svc.path, "continue-available", "941680A1-A4D9-48DF-927B-2E19870F8085", w, continue_available),
            Char(svc.path + "/c2", svc.path, "stop-available", "FD64C111-356F-4968-85C2-2DD979E3878E", w),
            cont_state,
            Char(svc.path + "/c4", svc.path, "stop-state", "A83173E8-9546-4D91-A736-B087AE514321", rn)]
adv = Adv()
ad = bus.get_object("org.bluez", ADAPTER)
dbus.Interface(ad, PROPS).Set("org.bluez.Adapter1", "Powered", dbus.Boolean(True))
def ok(what): return lambda *a: log(what, "registered")
def err(what): return lambda e: (log(what, "FAILED", e), loop.quit())
dbus.Interface(ad, "org.bluez.GattManager1").RegisterApplication(app.path, {}, reply_handler=ok("GATT app"), error_handler=err("GATT app"))
dbus.Interface(ad, "org.bluez.LEAdvertisingManager1").RegisterAdvertisement(adv.path, {}, reply_handler=ok("advertisement"), error_handler=err("advertisement"))
GLib.timeout_add_seconds(LIFETIME, loop.quit)
loop.run()
