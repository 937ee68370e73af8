#!/bin/sh
# PCA9685 over the kernel's i2c-stub (a real /dev/i2c-N, SMBus byte and I2C-block transfers,
# a 256-byte register file per address, no PCA9685 semantics).
#   pca9685-play     rig play (steps, --trigger auto) twice; LEDn/MODE1/MODE2/PRE_SCALE hold
#                    what the rig file and the final pose say; the trace agrees; the second
#                    run finds the chip awake and does not put it to sleep
#   pca9685-probe    rig probe i2c lists 0x40 on the stub's bus; --rig reads MODE1/PRE_SCALE
#   pca9685-absent   a rig file naming 0x41 (nothing there): exit 1 with a message naming
#                    the bus, the address and the errno; no crash
#   pca9685-doctor   rig doctor: the bus and the chip at 0x40 ok (PRE_SCALE read), exit 0 on
#                    that; 0x41 a problem with its fix, exit 1; the registers untouched
#   clock-doctor     rig doctor's clock check with the VM kernel's NTP state set unsynchronised,
#                    then synchronised (adjtimex ADJ_STATUS, ntp_status.py)
#   imu-settle       an MPU-6050 at 0x68 beside it (WHO_AM_I set in the stub): rig doctor's imu
#                    check ok; rig play with "settle": {"sensor": "imu"} reads the gyro through
#                    i2c-dev every tick and measures every step still; the configuration bytes
. "$GUEST/lib.sh"

modprobe i2c-dev && modprobe i2c-stub chip_addr=0x40 || { result pca9685-play FAIL "modprobe i2c-stub/i2c-dev failed"; exit 0; }
N=""
for d in /sys/class/i2c-dev/i2c-*; do grep -q 'SMBus stub' "$d/name" 2>/dev/null && N=${d##*-}; done
[ -n "$N" ] || { result pca9685-play FAIL "no i2c-stub bus in /sys/class/i2c-dev"; exit 0; }
BUS=/dev/i2c-$N
wait_for 10 test -c "$BUS"
note "i2c-stub is $BUS"; i2cdetect -l

# A non-default frequency and oscillator so the prescale and period are not the usual ones;
# channels 0, 1, 5 and 9 so the driver's bursts skip gaps; one release and one park axis.
cat > "$W/rig.json" <<EOF
{
  "name": "hil-pca9685",
  "loopRateHz": 100,
  "output": { "type": "pca9685", "bus": "$BUS", "address": "0x40", "frequencyHz": 60, "oscillatorHz": 26500000 },
  "axes": [
    { "name": "pan", "channel": 0, "pulseUs": [1000, 2000], "angleDeg": [-90, 90], "home": 0,
      "softLimits": [-85, 85], "maxVelocity": 180, "maxAcceleration": 720, "idle": "hold" },
    { "name": "tilt", "channel": 1, "pulseUs": [600, 2400], "angleDeg": [-90, 90], "inverted": true, "home": 0,
      "park": -30, "softLimits": [-45, 60], "maxVelocity": 180, "maxAcceleration": 720, "idle": "hold" },
    { "name": "slide", "channel": 5, "calibration": [[-50, 900], [0, 1450], [50, 2100]], "home": 0,
      "softLimits": [-50, 50], "maxVelocity": 100, "maxAcceleration": 400, "idle": "hold" },
    { "name": "light", "kind": "pwm", "channel": 9, "home": 10, "softLimits": [0, 100],
      "maxVelocity": 200, "maxAcceleration": 800, "idle": "release" }
  ]
}
EOF
cat > "$W/steps.json" <<EOF
{
  "rig": "rig.json",
  "kind": "steps",
  "settleSeconds": 0.1,
  "steps": [
    { "pose": { "pan": 20, "tilt": 10, "slide": -20, "light": 40 } },
    { "pose": { "pan": -33.3, "tilt": 42.7, "slide": 31.4, "light": 73.3 } }
  ]
}
EOF
# Final pose: the last step, except tilt, which parks at -30 (light is released: full off).
POSE='{"pan": -33.3, "tilt": -30, "slide": 31.4, "light": 73.3}'

play_and_check() {  # $1 = run number
  rm -f "$W/trace$1.csv"
  note "rig play run $1"
  "$RIG" play "$W/steps.json" --trigger auto --trace "$W/trace$1.csv" --no-realtime > "$W/play$1.out" 2>&1
  rc=$?
  cat "$W/play$1.out"
  if [ $rc != 0 ]; then echo "rig play exit $rc"; return 1; fi
  i2cdump -y "$N" 0x40 b > "$W/dump$1.txt" 2>&1
  cat "$W/dump$1.txt"
  $PY "$GUEST/pca9685_expect.py" "$W/rig.json" "$W/dump$1.txt" "$W/trace$1.csv" "$POSE"
}

detail=""
if play_and_check 1; then
  # Second run: the chip is awake at our PRE_SCALE, so the driver rewrites the registers in
  # place (no sleep), and starts from the pose it saved (the state file).
  ls -l "$XDG_STATE_HOME/rig/" 2>&1
  if play_and_check 2; then
    if grep -q "registers rewritten without sleeping" "$W/play2.out"; then
      result pca9685-play PASS "bus $BUS: LED0-15, MODE1, MODE2, PRE_SCALE as computed from the rig file and final pose, trace agrees; 2nd run re-initialised without sleeping"
    else
      result pca9685-play FAIL "second run: registers right, but the driver did not report finding the chip awake (play2.out)"
    fi
  else
    result pca9685-play FAIL "second run: registers or trace do not match (see log)"
  fi
else
  result pca9685-play FAIL "registers or trace do not match the rig file, or rig play failed (see log)"
fi
keep "$W/rig.json" "$W/steps.json" "$W/trace1.csv" "$W/dump1.txt" "$W/dump2.txt"

# --- probe ---------------------------------------------------------------------------
"$RIG" probe i2c > "$W/probe.out" 2>&1; rc=$?
cat "$W/probe.out"
"$RIG" probe i2c --rig "$W/rig.json" > "$W/probe-rig.out" 2>&1; rc2=$?
cat "$W/probe-rig.out"
if [ $rc = 0 ] && grep -Eq "^$BUS: .*0x40" "$W/probe.out" && ! grep -Eq "^$BUS: .*0x41" "$W/probe.out" \
   && [ $rc2 = 0 ] && grep -q "PRE_SCALE 107" "$W/probe-rig.out"; then
  result pca9685-probe PASS "rig probe i2c lists 0x40 (only) on $BUS; --rig reads PRE_SCALE 107"
else
  result pca9685-probe FAIL "probe exit $rc / --rig exit $rc2; expected '$BUS: 0x40' and 'PRE_SCALE 107' (see log)"
fi

# --- absent address --------------------------------------------------------------------
sed 's/"address": "0x40"/"address": "0x41"/' "$W/rig.json" > "$W/rig41.json"
sed 's/"rig.json"/"rig41.json"/' "$W/steps.json" > "$W/steps41.json"
"$RIG" play "$W/steps41.json" --trigger auto --no-realtime > "$W/absent.out" 2>&1; rc=$?
"$RIG" probe i2c --rig "$W/rig41.json" > "$W/absent-probe.out" 2>&1; rc2=$?
echo "--- play (exit $rc):"; cat "$W/absent.out"; echo "--- probe --rig (exit $rc2):"; cat "$W/absent-probe.out"
names_all() { grep "$BUS" "$1" | grep -i "0x41" | grep -Eq "E[A-Z]{2,}|[Nn]o such device"; }
crashed() { grep -Eq "Fatal error|Stack dump|Segmentation|Illegal instruction|Trace/breakpoint" "$1"; }
i2cdump -y "$N" 0x40 b > "$W/dump3.txt" 2>&1
if [ $rc = 1 ] && names_all "$W/absent.out" && ! crashed "$W/absent.out" \
   && [ $rc2 = 1 ] && grep -q "0x41" "$W/absent-probe.out" && ! crashed "$W/absent-probe.out" \
   && cmp -s "$W/dump2.txt" "$W/dump3.txt"; then
  result pca9685-absent PASS "address 0x41: exit 1, '$(grep 'error:' "$W/absent.out" | head -1 | cut -c1-110)…'; 0x40 untouched"
else
  result pca9685-absent FAIL "play exit $rc, probe exit $rc2 (want 1 and 1, a message naming $BUS, 0x41 and the errno, no crash; 0x40 untouched)"
fi

# --- doctor ------------------------------------------------------------------------------
XDG_STATE_HOME=$W/doctor-state RIG_LOCK_DIR=$W/doctor-lock "$RIG" doctor --rig "$W/rig.json" --scan-seconds 0 > "$W/doctor.out" 2>&1; rc=$?
XDG_STATE_HOME=$W/doctor-state RIG_LOCK_DIR=$W/doctor-lock "$RIG" doctor --rig "$W/rig41.json" --scan-seconds 0 > "$W/doctor41.out" 2>&1; rc2=$?
echo "--- doctor (exit $rc):"; cat "$W/doctor.out"; echo "--- doctor 0x41 (exit $rc2):"; cat "$W/doctor41.out"
i2cdump -y "$N" 0x40 b > "$W/dump4.txt" 2>&1
if [ $rc = 0 ] && grep -q "^ok       i2c: $BUS is there" "$W/doctor.out" && grep -q "^ok       pca9685: 0x40: MODE1 .*PRE_SCALE 107" "$W/doctor.out" \
   && [ $rc2 = 1 ] && grep -q "^problem  pca9685: nothing answered at 0x41 on $BUS" "$W/doctor41.out" && grep -q "fix: check the board's power" "$W/doctor41.out" \
   && cmp -s "$W/dump3.txt" "$W/dump4.txt"; then
  result pca9685-doctor PASS "rig doctor: $BUS and the chip at 0x40 ok (exit 0); 0x41 a problem with its fix (exit 1); registers untouched"
else
  result pca9685-doctor FAIL "doctor exit $rc / $rc2 (want 0 with $BUS and 0x40 ok, 1 naming 0x41 with a fix; registers untouched)"
fi

# --- doctor's clock check (the VM's own kernel NTP state, set both ways) --------------------
$PY "$GUEST/ntp_status.py" unsync
XDG_STATE_HOME=$W/doctor-state RIG_LOCK_DIR=$W/doctor-lock "$RIG" doctor --rig "$W/rig.json" --scan-seconds 0 > "$W/doctor-unsync.out" 2>&1
$PY "$GUEST/ntp_status.py" sync
XDG_STATE_HOME=$W/doctor-state RIG_LOCK_DIR=$W/doctor-lock "$RIG" doctor --rig "$W/rig.json" --scan-seconds 0 > "$W/doctor-sync.out" 2>&1
grep clock "$W/doctor-unsync.out" "$W/doctor-sync.out"
if grep -q "^warning  clock: the system clock is not synchronised" "$W/doctor-unsync.out" && grep -q "^ok       clock: synchronised (NTP)" "$W/doctor-sync.out"; then
  result clock-doctor PASS "rig doctor: kernel NTP state unsynchronised → warning with the fix; synchronised → ok"
else
  result clock-doctor FAIL "rig doctor's clock lines do not follow the kernel's NTP state (see log)"
fi

# --- an MPU-6050 beside the PCA9685 (i2c-stub answers at 0x68 too) --------------------------
# The stub has no MPU-6050 semantics: WHO_AM_I is set by hand, the gyro registers read 0 (a
# still head). rig's real driver goes through i2c-dev: byte writes and the 6-byte I2C block.
rmmod i2c-stub && modprobe i2c-stub chip_addr=0x40,0x68 || { result imu-settle FAIL "modprobe i2c-stub chip_addr=0x40,0x68 failed"; exit 0; }
N=""
for d in /sys/class/i2c-dev/i2c-*; do grep -q 'SMBus stub' "$d/name" 2>/dev/null && N=${d##*-}; done
[ -n "$N" ] || { result imu-settle FAIL "no i2c-stub bus after reloading it"; exit 0; }
BUS=/dev/i2c-$N
wait_for 10 test -c "$BUS"
i2cset -y "$N" 0x68 0x75 0x68
sed -e "s|\"name\": \"hil-pca9685\",|\"name\": \"hil-imu\", \"imu\": {\"bus\": \"$BUS\", \"address\": \"0x68\"}, \"settle\": {\"sensor\": \"imu\", \"thresholdDegPerS\": 0.5, \"holdSeconds\": 0.1, \"timeoutSeconds\": 5},|" \
    -e "s|\"bus\": \"/dev/i2c-[0-9]*\", \"address\": \"0x40\"|\"bus\": \"$BUS\", \"address\": \"0x40\"|" "$W/rig.json" > "$W/rig-imu.json"
sed -e 's|"rig": "rig.json"|"rig": "rig-imu.json"|' "$W/steps.json" > "$W/steps-imu.json"
XDG_STATE_HOME=$W/doctor-state RIG_LOCK_DIR=$W/doctor-lock "$RIG" doctor --rig "$W/rig-imu.json" --scan-seconds 0 > "$W/doctor-imu.out" 2>&1
"$RIG" play "$W/steps-imu.json" --trigger auto --no-realtime > "$W/play-imu.out" 2>&1; rc=$?
echo "--- doctor (imu):"; grep imu "$W/doctor-imu.out"; echo "--- play (imu, exit $rc):"; cat "$W/play-imu.out"
pwr=$(i2cget -y "$N" 0x68 0x6b b 2>&1); gyro=$(i2cget -y "$N" 0x68 0x1b b 2>&1)
still=$(grep -c "measured still" "$W/play-imu.out"); unstill=$(grep -c "not measured still" "$W/play-imu.out")
if [ $rc = 0 ] && grep -q "^ok       imu: " "$W/doctor-imu.out" && grep -q "measured settle: the MPU-6050 at 0x68 on $BUS, its offset (0.00, 0.00, 0.00)" "$W/play-imu.out" \
   && [ "$still" = 2 ] && [ "$unstill" = 0 ] && [ "$pwr" = 0x01 ] && [ "$gyro" = 0x08 ]; then
  result imu-settle PASS "MPU-6050 at 0x68 on $BUS: rig doctor ok; rig play's 2 steps measured still through i2c-dev (PWR_MGMT_1 $pwr, GYRO_CONFIG $gyro)"
else
  result imu-settle FAIL "doctor/play with the IMU (exit $rc, $still measured still, $unstill not, PWR_MGMT_1 $pwr, GYRO_CONFIG $gyro; see log)"
fi
exit 0
