#!/bin/sh
# Bluetooth infrastructure: one `btvirt -l2` (two linked virtual LE controllers, hci0 and
# hci1), the system D-Bus and the real bluetoothd 5.66 on them. A GATT server with an LE
# advertisement registered on hci0 (python3-dbus) is discovered, connected, read and written
# from hci1 through bluetoothd's client API: what BUI (rig = peripheral on hci0, Cascable =
# central on hci1) and BLEControl (rig = central on hci1, board = peripheral on hci0) need.
. "$GUEST/lib.sh"

if ! bt_up; then result bluetooth FAIL "could not start btvirt + dbus + bluetoothd"; bt_logs; exit 0; fi
bluetoothctl list
A0=$(bt_address hci0); note "hci0 = $A0, hci1 = $(bt_address hci1)"
$PY "$GUEST/bt_server.py" /org/bluez/hci0 120 > "$W/server.log" 2>&1 & SP=$!
wait_for 120 grep -q "advertisement registered" "$W/server.log"
cat "$W/server.log"
DISC_TIMEOUT=60 timeout 120 $PY "$GUEST/bt_client.py" /org/bluez/hci1 "$A0"; rc=$?
kill $SP 2>/dev/null; wait $SP 2>/dev/null
echo "--- server log:"; cat "$W/server.log"
if [ $rc = 0 ]; then
  result bluetooth PASS "GATT server + advertisement on hci0 ($A0) found, connected, read and written from hci1 via bluetoothd"
else
  result bluetooth FAIL "client exit $rc"; bt_logs
fi

# The same stack, shaped like BUI (REFERENCE §1): a stand-in peripheral with the BUI service
# on hci0, and bui_central.py playing Cascable from hci1: flags, reads, subscription,
# Cascable's write order, and notifications (press 0x01, release 0x00) back through bluetoothd.
$PY "$GUEST/bui_peripheral.py" /org/bluez/hci0 400 > "$W/bui-peripheral.log" 2>&1 & SP=$!
wait_for 120 grep -q "advertisement registered" "$W/bui-peripheral.log"
timeout 300 $PY "$GUEST/bui_central.py" /org/bluez/hci1 2 --timeout 120 --forget --nudge hci0 > "$W/bui-central.log" 2>&1; rc=$?
kill $SP 2>/dev/null; wait $SP 2>/dev/null
echo "--- bui_central.py:"; cat "$W/bui-central.log"; echo "--- bui_peripheral.py:"; cat "$W/bui-peripheral.log"
if [ $rc = 0 ] && grep -q '"event": "done"' "$W/bui-central.log"; then
  result bluetooth-bui-shape PASS "BUI-shaped GATT (5 characteristics, write + notify) on hci0 driven from hci1 by bui_central.py: 2 rounds, press/release notified"
else
  result bluetooth-bui-shape FAIL "bui_central.py exit $rc: $(grep '"fail"' "$W/bui-central.log" | tail -1)"; bt_logs 20
fi
exit 0
