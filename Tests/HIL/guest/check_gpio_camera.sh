#!/bin/sh
# The GPIO camera trigger (`"camera": {"type": "gpio"}`) on the gpio-sim chip: the contacts'
# edges in order (focus, shutter, release), the shutter held for the shutter time or, in
# bulb mode, the exposure; both lines released after the run and after Ctrl-C mid-exposure;
# rig doctor names the holder of the lines while they are held, and finds them free after.
# See docs/hil.md (gpio-camera).
. "$GUEST/lib.sh"
if ! "$RIG" play --help 2>&1 | grep -q -- '--no-shoot'; then
  result gpio-camera SKIP "feature not merged yet (rig play --help lists no --no-shoot)"
  exit 0
fi
. "$GUEST/gpio_sim.sh"
gpio_sim_up || { result gpio-camera FAIL "could not make the gpio-sim chip"; exit 0; }
FOCUS=22; SHUTTER=27
value() { cat "$SIM_SYS/sim_gpio$1/value"; }
lines_free() { for l in $FOCUS $SHUTTER; do gpioinfo "$SIM_CHIP" | grep -E "line +$l:" | grep -q unused || return 1; done; }
fails=""
fail() { fails="$fails; $*"; note "FAIL: $*"; }

cat > "$W/rig.json" <<EOF2
{"name": "hil-camera", "loopRateHz": 50, "output": {"type": "sim"},
 "camera": {"type": "gpio", "chip": "$SIM_CHIP", "shutterLine": $SHUTTER, "focusLine": $FOCUS, "activeLow": false,
            "focusMs": 200, "shutterMs": 150, "afterShotMs": 300},
 "axes": [{"name": "pan", "channel": 0, "softLimits": [-80, 80], "maxVelocity": 60, "maxAcceleration": 240, "backlashDeg": 1}]}
EOF2
program() {  # program NAME SHOOT-OBJECT STEPS
  cat > "$W/$1.json" <<EOF2
{"rig": "rig.json", "kind": "steps", "trigger": "auto", "settleSeconds": 0.1, "shoot": $2, "steps": $3}
EOF2
}
program normal '{"exposureSeconds": 0}' '[{"pose": {"pan": -20}}, {"pose": {"pan": 0}}, {"pose": {"pan": 20}}]'
program bulb '{"exposureSeconds": 1.5, "bulb": true}' '[{"pose": {"pan": 10}}]'
program long '{"exposureSeconds": 60, "bulb": true}' '[{"pose": {"pan": 10}}, {"pose": {"pan": 20}}]'

# Samples the lines while `rig play` runs; prints the changes to $W/NAME.lines.
sample_start() { rm -f "$W/stop"; $PY "$GUEST/camera_lines.py" "$SIM_SYS" $FOCUS $SHUTTER "$W/stop" > "$W/$1.lines" & SP=$!; wait_for 20 test -s "$W/$1.lines"; }
sample_stop() { touch "$W/stop"; wait $SP; }
# Shutter pulses as "hold_s focus_before_s focus_after_s" per pulse, from the sampled changes.
pulses() { $PY - "$1" <<'EOF2'
import sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
rows = [(float(t), f, s) for t, f, s in rows]
up = None; fup = None; out = []
for i, (t, f, s) in enumerate(rows):
    prev = rows[i - 1] if i else (t, "0", "0")
    if f == "1" and prev[1] == "0": fup = t
    if s == "1" and prev[2] == "0": up = (t, f == "1", fup)
    if s == "0" and prev[2] == "1" and up:
        fdown = next((tt for tt, ff, _ in rows[i:] if ff == "0"), None)
        ok = up[1] and fdown is not None
        out.append("%.3f %.3f %.3f %s" % (t - up[0], up[0] - (up[2] or up[0]), (fdown or t) - t, "ok" if ok else "FOCUS-NOT-HELD"))
        up = None
print("\n".join(out))
EOF2
}

# --- run 1: three steps, normal shots ---------------------------------------------------------
sample_start normal
timeout 200 "$RIG" play "$W/normal.json" --log "$W/normal.jsonl" --no-realtime > "$W/normal.out" 2>&1; rc=$?
sample_stop
cat "$W/normal.out" | tail -15; cat "$W/normal.lines"
[ $rc = 0 ] || fail "run 1: exit $rc"
P=$(pulses "$W/normal.lines"); note "pulses (hold, focus lead, focus after): $(echo "$P" | tr '\n' ';')"
[ "$(echo "$P" | grep -c .)" = 3 ] || fail "run 1: $(echo "$P" | grep -c .) shutter pulses, want 3"
echo "$P" | grep -q FOCUS-NOT-HELD && fail "run 1: the shutter closed without focus held"
echo "$P" | awk '{ if ($1 < 0.13 || $1 > 0.6) exit 1; if ($2 < 0.17) exit 1 }' || fail "run 1: shutter hold or focus lead out of range (hold 150 ms, focus 200 ms before): $P"
[ "$(grep -c '"event":"shot"' "$W/normal.jsonl")" = 3 ] || fail "run 1: the log has $(grep -c '"event":"shot"' "$W/normal.jsonl") shots"
grep -q '"reason":"done","lastStep":3' "$W/normal.jsonl" || fail "run 1: the log does not end done at step 3"
wait_for 10 lines_free || fail "run 1: lines not released"
[ "$(value $FOCUS)$(value $SHUTTER)" = 00 ] || fail "run 1: lines not open after exit"
keep "$W/normal.jsonl" "$W/normal.lines"

# --- run 2: bulb, 1.5 s ---------------------------------------------------------------------
sample_start bulb
timeout 200 "$RIG" play "$W/bulb.json" --log "$W/bulb.jsonl" --no-realtime > "$W/bulb.out" 2>&1; rc=$?
sample_stop
cat "$W/bulb.lines"
[ $rc = 0 ] || fail "run 2: exit $rc"
B=$(pulses "$W/bulb.lines"); note "bulb pulse: $B"
[ "$(echo "$B" | grep -c .)" = 1 ] || fail "run 2: $(echo "$B" | grep -c .) shutter pulses, want 1"
echo "$B" | awk '{ if ($1 < 1.45 || $1 > 2.5) exit 1 }' || fail "run 2: bulb hold $B, want 1.5 s"
wait_for 10 lines_free || fail "run 2: lines not released"

# --- run 3: Ctrl-C in the middle of a 60 s exposure --------------------------------------------
timeout 200 "$RIG" play "$W/long.json" --log "$W/long.jsonl" --no-realtime > "$W/long.out" 2>&1 & RP=$!
wait_for 120 sh -c "[ \"\$(cat $SIM_SYS/sim_gpio$SHUTTER/value)\" = 1 ]" || fail "run 3: the shutter never closed"
lines_free && fail "run 3: gpioinfo shows the camera lines unused while rig runs"
gpioinfo "$SIM_CHIP" | grep -E "line +($FOCUS|$SHUTTER):"
# rig doctor while another rig holds the lines: a problem naming the holder, exit 1.
doctor() { XDG_STATE_HOME=$W/doctor-state RIG_LOCK_DIR=$W/doctor-lock "$RIG" doctor --rig "$W/rig.json" --scan-seconds 0 > "$W/doctor-$1.out" 2>&1; }
doctor held; drc=$?; cat "$W/doctor-held.out"
[ $drc = 1 ] && grep -q "^problem  gpio: /dev/$SIM_CHIP: line $SHUTTER (camera) is held by \"rig-camera\"" "$W/doctor-held.out" \
  || fail "rig doctor with the lines held: exit $drc, no problem naming line $SHUTTER and its holder"
kill -INT $RP
wait $RP; rc=$?
tail -8 "$W/long.out"
[ $rc = 0 ] || fail "run 3: exit $rc after Ctrl-C"
wait_for 10 lines_free || fail "run 3: lines not released after Ctrl-C"
[ "$(value $FOCUS)$(value $SHUTTER)" = 00 ] || fail "run 3: contacts not open after Ctrl-C"
grep -q '"reason":"stopped"' "$W/long.jsonl" || fail "run 3: the log does not end stopped"
# …and with them free again: ok, exit 0.
doctor free; drc=$?; cat "$W/doctor-free.out"
[ $drc = 0 ] && grep -q "^ok       gpio: /dev/$SIM_CHIP: lines $SHUTTER, $FOCUS free" "$W/doctor-free.out" \
  || fail "rig doctor with the lines free: exit $drc, no ok for lines $SHUTTER, $FOCUS"
keep "$W/long.jsonl" "$W/long.out"

if [ -z "$fails" ]; then
  result gpio-camera PASS "$SIM_CHIP: focus then shutter then release per shot, 3 shots (holds $(echo "$P" | cut -d' ' -f1 | tr '\n' ' ')s), bulb held $(echo "$B" | cut -d' ' -f1)s for 1.5 s, lines released after each run and after Ctrl-C mid-exposure; rig doctor names the lines' holder (exit 1), then finds them free (exit 0)"
else
  result gpio-camera FAIL "${fails#; }"
fi
