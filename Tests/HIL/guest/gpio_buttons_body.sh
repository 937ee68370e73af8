# The body of check_gpio_buttons.sh (sourced after gpio_sim_up): `rig play --trigger gpio`
# on the gpio-sim chip $SIM_CHIP, buttons driven through sysfs pulls, LEDs read back from
# sysfs. Cascable's wiring: continue button BCM 13, stop button BCM 10 (pull-up, pressed =
# low), continue LED 21, stop LED 7. See docs/hil.md (gpio-buttons).
#   run 1: 4 steps; at step 1 at rest with the continue LED lit; a press with contact bounce
#          advances one step; a press while moving is kept (the rig settles at the next step,
#          then goes on) and skips nothing; the press at the last step ends it (exit 0)
#   run 2: the stop button during a move: brake, park, exit 0
#   both:  lines 13, 10, 21, 7 released afterwards, LEDs off
sim_pull 13 pull-up; sim_pull 10 pull-up
led() { cat "$SIM_SYS/sim_gpio$1/value"; }
# A press is held longer than the 30 ms debounce time (a property of a real press, not a
# wait for anything): an edge back within it counts as contact bounce.
HOLD=0.15
press() { sim_pull "$1" pull-down; sleep $HOLD; sim_pull "$1" pull-up; }
bounce_press() {  # five quick toggles, then held down, then released
  sim_pull "$1" pull-down; sim_pull "$1" pull-up; sim_pull "$1" pull-down; sim_pull "$1" pull-up
  sim_pull "$1" pull-down; sleep $HOLD; sim_pull "$1" pull-up
}
ready() { grep -c "step $1 of 4 ready" "$OUTF"; }
lines_free() {  # gpioinfo: "line  13:     "GPIO13"     unused   input  active-high"
  for l in 13 10 21 7; do gpioinfo "$SIM_CHIP" | grep -E "line +$l:" | grep -q unused || return 1; done
}

cat > "$W/rig.json" <<EOF
{
  "name": "hil-buttons",
  "loopRateHz": 50,
  "output": { "type": "sim" },
  "buttons": { "chip": "$SIM_CHIP", "continueLine": 13, "stopLine": 10, "continueLed": 21, "stopLed": 7,
               "activeLow": true, "debounceMs": 30 },
  "axes": [
    { "name": "pan", "channel": 0, "pulseUs": [1000, 2000], "angleDeg": [-90, 90], "home": 0,
      "softLimits": [-85, 85], "maxVelocity": 40, "maxAcceleration": 160, "idle": "hold" },
    { "name": "tilt", "channel": 1, "pulseUs": [1000, 2000], "angleDeg": [-90, 90], "home": 0, "park": -30,
      "softLimits": [-45, 45], "maxVelocity": 60, "maxAcceleration": 240, "idle": "hold" }
  ]
}
EOF
cat > "$W/steps.json" <<EOF
{
  "rig": "rig.json",
  "kind": "steps",
  "settleSeconds": 0.1,
  "steps": [
    { "pose": { "pan": 10, "tilt": 0 } },
    { "pose": { "pan": 40, "tilt": 20 } },
    { "pose": { "pan": -80, "tilt": 10 } },
    { "pose": { "pan": 30, "tilt": -10 } }
  ]
}
EOF
# The pose in the trace's last rows (pan, tilt).
last_pose() { $PY - "$1" <<'EOF'
import csv, sys
last = {}
for r in csv.DictReader(open(sys.argv[1])):
    last[r["axis"]] = float(r["position_deg"])
print("%.2f %.2f" % (last.get("pan", 99), last.get("tilt", 99)))
EOF
}
# The trace's distinct rest positions of pan, in order (runs of ≥ 3 equal rows).
pan_rests() { $PY - "$1" <<'EOF'
import csv, sys
ps = [round(float(r["position_deg"]), 2) for r in csv.DictReader(open(sys.argv[1])) if r["axis"] == "pan"]
rests, run = [], 1
for a, b in zip(ps, ps[1:]):
    run = run + 1 if a == b else 1
    if run == 3 and (not rests or rests[-1] != b): rests.append(b)
print(" ".join("%g" % r for r in rests))
EOF
}

fails=""
fail() { fails="$fails; $*"; note "FAIL: $*"; }

# --- run 1 ---------------------------------------------------------------------------------
OUTF=$W/play1.out
timeout 300 "$RIG" play "$W/steps.json" --trigger gpio --trace "$W/trace1.csv" --no-realtime > "$OUTF" 2>&1 & RP=$!
wait_for 120 sh -c "grep -q 'step 1 of 4 ready' $OUTF" || fail "never ready at step 1"
wait_for 10 sh -c "[ \"\$(cat $SIM_SYS/sim_gpio21/value)\" = 1 ]" || fail "continue LED not lit while waiting at step 1"
[ "$(last_pose "$W/trace1.csv" | cut -d' ' -f1)" = 10.00 ] || fail "not at rest at step 1: $(last_pose "$W/trace1.csv")"
lines_free && fail "gpioinfo shows the buttons/LEDs unused while rig runs"
gpioinfo "$SIM_CHIP" | grep -E 'line +(7|10|13|21):'

note "bounce press"
bounce_press 13
wait_for 60 sh -c "grep -q 'step 2 of 4 ready' $OUTF" || fail "the bounced press did not reach step 2"
[ "$(ready 3)" = 0 ] || fail "the bounced press advanced more than one step"
[ "$(led 21)" = 1 ] || fail "continue LED not lit at step 2"
note "press, then a press while moving"
press 13
# The move to step 3 (120° at 40°/s, ≥ 3 s) has begun: press again during it.
wait_for 30 grep -q 'move to step 3/4' "$OUTF" || fail "the press at step 2 did not start the move to step 3"
[ "$(led 21)" = 0 ] || fail "continue LED still lit while the rig moves"
if grep -q 'step 3/4 settled' "$OUTF"; then
  fail "step 3 settled before the press meant to come during the move (machine too slow for this check)"
fi
press 13
wait_for 60 sh -c "grep -q 'step 4 of 4 ready' $OUTF" || fail "the press kept while moving did not take the rig on to step 4"
[ "$(ready 3)" = 0 ] || fail "the rig waited at step 3 although a press came while it moved there"
[ "$(led 21)" = 1 ] || fail "continue LED not lit at step 4"
note "press at the last step"
press 13
wait $RP; rc1=$?
cat "$OUTF" | grep -v '^step [0-9]/[0-9] ' | tail -40
[ $rc1 = 0 ] || fail "run 1: exit $rc1"
for s in 1 2 3 4; do [ "$(grep -c "step $s/4 settled" "$OUTF")" = 1 ] || fail "step $s/4 settled not logged exactly once"; done
R1=$(pan_rests "$W/trace1.csv"); note "run 1 pan rests: $R1"
case "$R1" in "10 40 -80 30"*) ;; *) fail "trace rests $R1, want 10 40 -80 30 (every step, in order)" ;; esac
P1=$(last_pose "$W/trace1.csv"); [ "$P1" = "30.00 -30.00" ] || fail "run 1 ends at $P1, want 30 (last step) and tilt parked at -30"
wait_for 10 lines_free || fail "run 1: lines not released: $(gpioinfo "$SIM_CHIP" | grep -E 'line +(7|10|13|21):' | tr -s ' ')"
[ "$(led 21)$(led 7)" = 00 ] || fail "run 1: LEDs not off after exit ($(led 21)$(led 7))"
keep "$W/trace1.csv" "$OUTF"

# --- run 2: the stop button ----------------------------------------------------------------
OUTF=$W/play2.out
timeout 300 "$RIG" play "$W/steps.json" --trigger gpio --trace "$W/trace2.csv" --no-realtime > "$OUTF" 2>&1 & RP=$!
wait_for 120 sh -c "grep -q 'step 1 of 4 ready' $OUTF" || fail "run 2: never ready at step 1"
press 13
wait_for 30 grep -q 'move to step 2/4' "$OUTF" || fail "run 2: the press did not start the move to step 2"
note "stop press"
press 10
wait $RP; rc2=$?
cat "$OUTF" | grep -v '^step [0-9]/[0-9] ' | tail -30
[ $rc2 = 0 ] || fail "run 2: exit $rc2"
grep -q 'stop button' "$OUTF" || fail "run 2: the stop button was not reported"
grep -q 'step 2 of 4 ready' "$OUTF" && grep -q 'step 2/4 settled' "$OUTF" && note "note: step 2 settled before the stop press"
P2=$(last_pose "$W/trace2.csv"); note "run 2 ends at $P2"
[ "${P2#* }" = -30.00 ] || fail "run 2: tilt not parked at -30 after stop ($P2)"
wait_for 10 lines_free || fail "run 2: lines not released"
[ "$(led 21)$(led 7)" = 00 ] || fail "run 2: LEDs not off after exit"
keep "$W/trace2.csv" "$OUTF"

if [ -z "$fails" ]; then
  result gpio-buttons PASS "$SIM_CHIP: LED lit while waiting, bounced press = 1 step, press while moving kept (rests $R1), last press ends (exit 0, $P1), stop button brakes + parks (exit 0, $P2), lines released, LEDs off"
else
  result gpio-buttons FAIL "${fails#; }"
fi
exit 0
