#!/bin/sh
# PLACEHOLDER until Cascable BUI step sync (`--trigger bui`) is merged. Turns on by itself
# when `rig play --help` lists a bui trigger. See docs/hil.md ("Checks waiting for
# features"); the Bluetooth stack it needs is verified by check_bluetooth.sh.
. "$GUEST/lib.sh"
if ! rig_has_trigger bui; then
  result bui SKIP "feature not merged yet (rig play --help lists no bui trigger)"
  exit 0
fi
bt_up || { result bui FAIL "could not start btvirt + dbus + bluetoothd"; bt_logs; exit 0; }
. "$GUEST/bui_body.sh"
