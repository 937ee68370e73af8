#!/bin/sh
# PLACEHOLDER until the BLEControl output (central) is merged. Turns on by itself when
# `rig scan` exists. See docs/hil.md ("Checks waiting for features"); the Bluetooth stack it
# needs is verified by check_bluetooth.sh.
. "$GUEST/lib.sh"
if ! rig_has_command scan; then
  result blecontrol SKIP "feature not merged yet (no rig scan command)"
  exit 0
fi
bt_up || { result blecontrol FAIL "could not start btvirt + dbus + bluetoothd"; bt_logs; exit 0; }
. "$GUEST/blecontrol_body.sh"
