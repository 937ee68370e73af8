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
exit 0
