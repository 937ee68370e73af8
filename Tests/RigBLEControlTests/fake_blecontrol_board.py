#!/usr/bin/env python3
"""A BLEControl test board on an emulated BlueZ adapter (bluezoo), for RigBLEControlTests.

It registers a GATT application on --adapter with service FFE0 and characteristic FFE1
(write, write-without-response, notify), implements AcquireWrite with a SOCK_SEQPACKET
socket pair, advertises FFE0 under --name, and decodes every write exactly like the
STM32 firmware: commands framed by their length byte, several whole commands per write.

Every write and every decoded command is appended to --log as one JSON line, with the
board's receive time and how it came ("request" / "command" WriteValue, or "fd"), and
every violation of what the firmware tolerates is logged as {"event": "violation"}:
a write over --max-write bytes, a command split across writes, anything packed after
INIT, an unknown command, a channel >= 8, a value > 1000, an LCD line over 15 bytes (16 with its terminator).

Run with DBUS_SYSTEM_BUS_ADDRESS pointing at the bus bluezoo serves.
"""
import argparse
import asyncio
import json
import signal
import socket
import time

from dbus_fast import BusType, Message, MessageType, Variant
from dbus_fast.aio import MessageBus
from dbus_fast.constants import PropertyAccess
from dbus_fast.errors import DBusError
from dbus_fast.service import ServiceInterface, dbus_property, method

APP = "/org/rig/board"
SERVICE = APP + "/service0"
CHAR = SERVICE + "/char0"
ADVERT = "/org/rig/advert0"
NAMES = {0: "INIT", 1: "ANALOG_OUT_EN", 2: "SERVO_VAL", 3: "PWM_VAL", 4: "LCD_TEXT", 5: "LCD_CLEAR"}


class Board:
    def __init__(self, log_path, max_write, reply_unknown):
        self.log_file = open(log_path, "a", buffering=1)
        self.max_write = max_write
        self.reply_unknown = reply_unknown
        self.notify = None  # set by the characteristic

    def log(self, **entry):
        entry["t"] = time.monotonic()
        self.log_file.write(json.dumps(entry) + "\n")

    def violation(self, what):
        self.log(event="violation", what=what)

    def receive(self, data, via):
        data = bytes(data)
        self.log(event="write", via=via, bytes=list(data))
        if len(data) > self.max_write:
            self.violation(f"write of {len(data)} bytes > {self.max_write}")
        i = 0
        after_init = False
        while i < len(data):
            if i + 1 >= len(data) or i + 2 + data[i + 1] > len(data):
                self.violation(f"command split across writes: {list(data[i:])}")
                return
            cmd, length = data[i], data[i + 1]
            payload = data[i + 2:i + 2 + length]
            if after_init:
                self.violation(f"{NAMES.get(cmd, cmd)} packed after INIT")
            entry = {"event": "command", "via": via, "cmd": cmd, "name": NAMES.get(cmd, "unknown")}
            if cmd == 0:
                after_init = True
            elif cmd in (1, 2, 3):
                if length != (2 if cmd == 1 else 3):
                    self.violation(f"{NAMES[cmd]} with length {length}")
                entry["channel"] = payload[0] if payload else None
                if payload and payload[0] >= 8:
                    self.violation(f"channel {payload[0]} >= 8")
                if cmd == 1 and len(payload) == 2:
                    entry["enable"] = payload[1]
                if cmd in (2, 3) and len(payload) == 3:
                    entry["value"] = payload[1] << 8 | payload[2]
                    if entry["value"] > 1000:
                        self.violation(f"value {entry['value']} > 1000")
            elif cmd == 4:
                if length < 2 or length - 2 > 15 or payload[-1:] != b"\x00":
                    self.violation(f"bad LCD_TEXT of length {length}")
                entry["line"] = payload[0] if payload else None
                entry["text"] = payload[1:-1].decode("ascii", "replace")
            elif cmd == 5:
                pass
            else:
                self.violation(f"unknown command {cmd}")
                if self.notify:
                    self.notify(bytes([0xFF, 0x01, cmd]))
            self.log(**entry)
            if cmd in (2, 3) and self.reply_unknown and self.notify:
                # Pretend the firmware rejected it once: the rig must log a warning. Only a
                # reply the rig is subscribed to counts: values may come before its
                # StartNotify, and a reply sent into the void then left nothing to warn about.
                if self.notify(bytes([0xFF, 0x01, cmd])):
                    self.reply_unknown = False
            i += 2 + length


class Service(ServiceInterface):
    def __init__(self):
        super().__init__("org.bluez.GattService1")

    @dbus_property(access=PropertyAccess.READ)
    def UUID(self) -> "s":
        return "0000ffe0-0000-1000-8000-00805f9b34fb"

    @dbus_property(access=PropertyAccess.READ)
    def Primary(self) -> "b":
        return True


class Characteristic(ServiceInterface):
    def __init__(self, board, acquire):
        super().__init__("org.bluez.GattCharacteristic1")
        self.board = board
        self.acquire = acquire
        self.notifying = False
        self.value = b""
        self.sockets = []
        board.notify = self.send_notification

    @dbus_property(access=PropertyAccess.READ)
    def UUID(self) -> "s":
        return "0000ffe1-0000-1000-8000-00805f9b34fb"

    @dbus_property(access=PropertyAccess.READ)
    def Service(self) -> "o":
        return SERVICE

    @dbus_property(access=PropertyAccess.READ)
    def Flags(self) -> "as":
        return ["write", "write-without-response", "notify"]

    @dbus_property(access=PropertyAccess.READ)
    def Notifying(self) -> "b":
        return self.notifying

    @dbus_property(access=PropertyAccess.READ)
    def Value(self) -> "ay":
        return self.value

    @method()
    def ReadValue(self, options: "a{sv}") -> "ay":
        return self.value

    @method()
    def WriteValue(self, value: "ay", options: "a{sv}"):
        kind = options.get("type")
        self.board.receive(value, kind.value if kind is not None else "request")

    @method()
    def AcquireWrite(self, options: "a{sv}") -> "hq":
        if not self.acquire:
            raise DBusError("org.bluez.Error.NotSupported", "no AcquireWrite on this board")
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        ours.setblocking(False)
        self.sockets.append((ours, theirs))
        loop = asyncio.get_running_loop()

        def readable():
            try:
                data = ours.recv(4096)
            except BlockingIOError:
                return
            if data:
                self.board.receive(data, "fd")
            else:
                loop.remove_reader(ours.fileno())

        loop.add_reader(ours.fileno(), readable)
        self.board.log(event="acquire-write")
        return [theirs.fileno(), 23]

    @method()
    def StartNotify(self):
        self.notifying = True
        self.board.log(event="start-notify")

    @method()
    def StopNotify(self):
        self.notifying = False
        self.board.log(event="stop-notify")

    @method()
    def Confirm(self):
        pass

    def send_notification(self, data):
        """Notifies the subscribed central; False (nothing sent) when none is."""
        if not self.notifying:
            return False
        self.value = data
        self.emit_properties_changed({"Value": data})
        return True


class Advertisement(ServiceInterface):
    def __init__(self, name):
        super().__init__("org.bluez.LEAdvertisement1")
        self.local_name = name

    @dbus_property(access=PropertyAccess.READ)
    def Type(self) -> "s":
        return "peripheral"

    @dbus_property(access=PropertyAccess.READ)
    def ServiceUUIDs(self) -> "as":
        return ["FFE0"]

    @dbus_property(access=PropertyAccess.READ)
    def LocalName(self) -> "s":
        return self.local_name

    @dbus_property(access=PropertyAccess.READ)
    def Discoverable(self) -> "b":
        return True

    @method()
    def Release(self):
        pass


async def call(bus, path, interface, member, signature, body):
    reply = await bus.call(Message(destination="org.bluez", path=path, interface=interface, member=member,
                                   signature=signature, body=body))
    if reply.message_type == MessageType.ERROR:
        raise RuntimeError(f"{member}: {reply.error_name} {reply.body}")
    return reply


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--adapter", default="hci1")
    parser.add_argument("--name", default="BLEControl")
    parser.add_argument("--log", required=True)
    parser.add_argument("--max-write", type=int, default=20)
    parser.add_argument("--no-acquire", action="store_true", help="refuse AcquireWrite (WriteValue only)")
    parser.add_argument("--reply-unknown-once", action="store_true", help="answer the first value sent while the central is subscribed with FF 01 <cmd>")
    args = parser.parse_args()

    board = Board(args.log, args.max_write, args.reply_unknown_once)
    bus = await MessageBus(bus_type=BusType.SYSTEM, negotiate_unix_fd=True).connect()
    bus.export(SERVICE, Service())
    bus.export(CHAR, Characteristic(board, acquire=not args.no_acquire))
    bus.export(ADVERT, Advertisement(args.name))
    adapter = f"/org/bluez/{args.adapter}"
    await call(bus, adapter, "org.bluez.GattManager1", "RegisterApplication", "oa{sv}", [APP, {}])
    await call(bus, adapter, "org.bluez.LEAdvertisingManager1", "RegisterAdvertisement", "oa{sv}", [ADVERT, {}])
    board.log(event="ready")

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    loop.add_signal_handler(signal.SIGINT, stop.set)
    await stop.wait()


if __name__ == "__main__":
    asyncio.run(main())
