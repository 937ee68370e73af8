#!/bin/sh
# Gamepad over uinput: a virtual pad (raw uinput ioctls from Python) drives `rig jog` on the
# simulated output through the kernel's evdev.
#   gamepad-record   stick moves, A records three keys, Start saves and ends (exit 0); the
#                    trace stays in the soft limits and under maxVelocity; the program has
#                    the rest poses as keys and `rig check` accepts it
#   gamepad-unplug   the pad is destroyed mid-move: the rig decelerates to rest short of the
#                    limit, stays there, the process waits; a new pad is found, Back ends it
. "$GUEST/lib.sh"

modprobe uinput && modprobe evdev || { result gamepad-record FAIL "modprobe uinput/evdev failed"; exit 0; }
wait_for 10 test -c /dev/uinput || { result gamepad-record FAIL "no /dev/uinput"; exit 0; }

# Slow axes (so a stick takes seconds to reach a limit, whatever the emulator's speed).
cat > "$W/jogrig.json" <<'JSON'
{
  "name": "hil-jog",
  "loopRateHz": 50,
  "output": { "type": "sim" },
  "axes": [
    { "name": "pan", "channel": 0, "pulseUs": [1000, 2000], "angleDeg": [-90, 90], "home": 0,
      "softLimits": [-80, 80], "maxVelocity": 20, "maxAcceleration": 60 },
    { "name": "tilt", "channel": 1, "pulseUs": [1000, 2000], "angleDeg": [-90, 90], "home": 0,
      "softLimits": [-40, 40], "maxVelocity": 20, "maxAcceleration": 60 }
  ]
}
JSON

for mode in record unplug; do
  note "gamepad $mode"
  $PY "$GUEST/gamepad_jog.py" $mode "$W/jogrig.json" "$RIG" "$W" > "$W/$mode.out" 2>&1; rc=$?
  cat "$W/$mode.out"
  summary=$(sed -n 's/^SUMMARY: //p' "$W/$mode.out" | tail -1)
  [ $rc = 0 ] && result gamepad-$mode PASS "$summary" || result gamepad-$mode FAIL "${summary:-exit $rc}"
done
keep "$W/jog-record.csv" "$W/jog-unplug.csv" "$W/programs/jogged.json" "$W/jog-record.log" "$W/jog-unplug.log"

# rig doctor: no pad → a warning; a uinput pad → ok, naming its node (the search rig jog uses).
note "gamepad doctor"
$PY - "$GUEST" "$RIG" "$W" > "$W/doctor.out" 2>&1 <<'EOF2'; rc=$?
import os, subprocess, sys
sys.path.insert(0, sys.argv[1])
from gamepad_jog import Pad
rig, work = sys.argv[2], sys.argv[3]
env = dict(os.environ, XDG_STATE_HOME=work + "/doctor-state", RIG_LOCK_DIR=work + "/doctor-lock")
ask = lambda: subprocess.run([rig, "doctor", "--rig", work + "/jogrig.json", "--scan-seconds", "0"], env=env, text=True,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT).stdout
before = ask()
pad = Pad("HIL Doctor Pad")
during = ask()
pad.destroy()
print(before); print(during)
ok = "warning  gamepad: no gamepad" in before and f"ok       gamepad: {pad.node}" in during
print("SUMMARY:", f"rig doctor: no pad → warning; {pad.node} → ok" if ok else "rig doctor's gamepad lines are not as expected")
sys.exit(0 if ok else 1)
EOF2
cat "$W/doctor.out"
summary=$(sed -n 's/^SUMMARY: //p' "$W/doctor.out" | tail -1)
[ $rc = 0 ] && result gamepad-doctor PASS "$summary" || result gamepad-doctor FAIL "${summary:-exit $rc}"
exit 0
