#!/usr/bin/python3
# Discover (LE) the peer advertising SVC_UUID from a given adapter, connect, read/write the characteristic.
import sys, time, dbus
ADAPTER = sys.argv[1]; TARGET = sys.argv[2].upper()
SVC_UUID = "12345678-1234-5678-1234-56789abcdef0"; CHR_UUID = "12345678-1234-5678-1234-56789abcdef1"
bus = dbus.SystemBus(); PROPS = "org.freedesktop.DBus.Properties"
om = dbus.Interface(bus.get_object("org.bluez", "/"), "org.freedesktop.DBus.ObjectManager")
ad = bus.get_object("org.bluez", ADAPTER); adp = dbus.Interface(ad, PROPS)
adp.Set("org.bluez.Adapter1", "Powered", dbus.Boolean(True))
a1 = dbus.Interface(ad, "org.bluez.Adapter1")
a1.SetDiscoveryFilter({"Transport": "le"}); a1.StartDiscovery(); t0 = time.time()
def find_dev():
    for p, ifs in om.GetManagedObjects().items():
        d = ifs.get("org.bluez.Device1")
        if d and d["Adapter"] == ADAPTER and d["Address"].upper() == TARGET: return p, d
    return None, None
dev = None
restarted = t0
while time.time() - t0 < float(__import__("os").environ.get("DISC_TIMEOUT", "30")):
    dev, d = find_dev()
    if dev: break
    if time.time() - restarted > 20:
        # Nothing seen for 20 s: scan again (resets the controller's duplicate filter; under
        # TCG an advertisement report has been missed).
        try: a1.StopDiscovery()
        except dbus.DBusException: pass
        a1.StartDiscovery(); restarted = time.time(); print("client: scanning again", flush=True)
    time.sleep(0.2)
print(f"client: discovered {dev} in {time.time()-t0:.2f}s props:", {k: str(v) for k, v in (d or {}).items() if k in ("Name", "UUIDs", "RSSI", "AddressType")}, flush=True)
if not dev: sys.exit(2)
a1.StopDiscovery()
devo = bus.get_object("org.bluez", dev); t1 = time.time()
dbus.Interface(devo, "org.bluez.Device1").Connect(timeout=60); print(f"client: Connect() returned after {time.time()-t1:.2f}s", flush=True)
while time.time() - t1 < 60 and not dbus.Interface(devo, PROPS).Get("org.bluez.Device1", "ServicesResolved"):
    time.sleep(0.2)
print(f"client: connected+services resolved in {time.time()-t1:.2f}s", flush=True)
chr_path = None
for p, ifs in om.GetManagedObjects().items():
    if p.startswith(dev + "/"):
        for i in ("org.bluez.GattService1", "org.bluez.GattCharacteristic1"):
            if i in ifs: print("client:  ", i.split(".")[-1], p, ifs[i]["UUID"])
        c = ifs.get("org.bluez.GattCharacteristic1")
        if c and c["UUID"] == CHR_UUID: chr_path = p
if not chr_path: sys.exit(3)
ch = dbus.Interface(bus.get_object("org.bluez", chr_path), "org.bluez.GattCharacteristic1")
v1 = bytes(ch.ReadValue({})); ch.WriteValue(dbus.ByteArray(b"world"), {"type": "request"}); v2 = bytes(ch.ReadValue({}))
print("client: read", v1, "wrote b'world', read back", v2, flush=True)
dbus.Interface(devo, "org.bluez.Device1").Disconnect()
sys.exit(0 if (v1, v2) == (b"hello", b"world") else 4)
