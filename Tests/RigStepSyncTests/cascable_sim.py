#!/usr/bin/env python3
"""A Cascable-simulating BLE central for the step-sync tests.

Finds the rig's Basic User Input service on --adapter, then runs --waits Wait For Input
blocks following Cascable's documented flow (Stop Available 0, Continue Available 0, the
recipe shoots, User Message, Continue Available 1, wait for the press and release,
Continue Available 0). Before that it tries malformed writes. With --messages, wait i
writes the i-th message (`|`-separated; empty: none) as the User Message just before
Continue Available 1. Every write and every
notification is logged as a JSON line with a monotonic timestamp to --log.
"""
import argparse, asyncio, json, sys, time, warnings

from bleak import BleakClient, BleakScanner

# bleak renamed its adapter argument; the old one works on every version CI may install.
warnings.filterwarnings("ignore", category=DeprecationWarning)

SERVICE = "9a43142a-f619-41ff-945d-527023ef5b9d"
MESSAGE = "deff81cc-0f74-4e86-ba01-f5d34e1c33e6"
CONTINUE_AVAILABLE = "941680a1-a4d9-48df-927b-2e19870f8085"
STOP_AVAILABLE = "fd64c111-356f-4968-85c2-2dd979e3878e"
CONTINUE_STATE = "eb366ce4-1952-4a55-a319-7e27a865554a"
STOP_STATE = "a83173e8-9546-4d91-a736-b087ae514321"


async def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--adapter", default="hci1")
    ap.add_argument("--waits", type=int, required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--stop-available", action="store_true")
    ap.add_argument("--press-timeout", type=float, default=60)
    ap.add_argument("--messages", default="", help="one User Message per wait, separated by |")
    args = ap.parse_args()
    log = open(args.log, "w")

    def rec(**kw):
        kw["t"] = time.monotonic()
        log.write(json.dumps(kw) + "\n")
        log.flush()

    found = asyncio.get_running_loop().create_future()

    def seen(device, adv):
        if SERVICE in [u.lower() for u in adv.service_uuids] and not found.done():
            found.set_result(device)

    scanner = BleakScanner(seen, adapter=args.adapter)
    await scanner.start()
    device = await asyncio.wait_for(found, 120)  # a deadline: discovery beside a loaded full run
    await scanner.stop()
    rec(event="found", name=device.name, address=device.address)

    notes = asyncio.Queue()
    async with BleakClient(device, adapter=args.adapter) as client:
        def on_continue(_, data):
            rec(event="notify", char="continue", value=data[0])
            notes.put_nowait(("continue", data[0]))

        def on_stop(_, data):
            rec(event="notify", char="stop", value=data[0])
            notes.put_nowait(("stop", data[0]))

        rec(event="read", char="continue", value=(await client.read_gatt_char(CONTINUE_STATE))[0])
        rec(event="read", char="stop", value=(await client.read_gatt_char(STOP_STATE))[0])
        await client.start_notify(CONTINUE_STATE, on_continue)
        await client.start_notify(STOP_STATE, on_stop)

        async def write(char, name, value, response=True):
            try:
                await client.write_gatt_char(char, value, response=response)
                rec(event="write", char=name, value=value.hex(), ok=True)
            except Exception as error:  # a refused write: what the test looks for
                rec(event="write", char=name, value=value.hex(), ok=False, error=str(error))

        # Malformed writes first: refused (with response) or ignored (without).
        await write(CONTINUE_AVAILABLE, "continueAvailable", b"\x01\x00")
        await write(CONTINUE_AVAILABLE, "continueAvailable", b"\x02")
        await write(STOP_AVAILABLE, "stopAvailable", b"")
        await write(CONTINUE_AVAILABLE, "continueAvailable", b"\x07", response=False)
        await write(MESSAGE, "message", b"")  # zero-length: the rig shows its default text

        for i in range(args.waits):
            await write(STOP_AVAILABLE, "stopAvailable", b"\x01" if args.stop_available else b"\x00")
            await write(CONTINUE_AVAILABLE, "continueAvailable", b"\x00")
            await asyncio.sleep(0.05)  # the recipe shoots (Cascable's time, not a sync)
            messages = args.messages.split("|") if args.messages else []
            if i < len(messages) and messages[i]:
                await write(MESSAGE, "message", messages[i].encode())
            await write(CONTINUE_AVAILABLE, "continueAvailable", b"\x01")
            rec(event="wait", index=i)
            last = i == args.waits - 1
            try:
                got = []
                while len(got) < 2:
                    char, value = await asyncio.wait_for(notes.get(), 3 if last else args.press_timeout)
                    got.append((char, value))
                rec(event="pressed", index=i, states=[v for _, v in got])
            except (asyncio.TimeoutError, Exception) as error:
                rec(event="no-press", index=i, reason=type(error).__name__)
                if not last:
                    break
            if client.is_connected:
                await write(CONTINUE_AVAILABLE, "continueAvailable", b"\x00")
    rec(event="done")


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except Exception as error:
        print(f"cascable_sim: {error!r}", file=sys.stderr)
        sys.exit(1)
