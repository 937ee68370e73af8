# The body of check_bui.sh (sourced after bt_up): `rig play --trigger bui` is the Cascable
# Basic User Input peripheral on hci0 through the real bluetoothd; bui_central.py plays
# Cascable from hci1. See docs/hil.md (bui) and docs/cascable.md.
#   discovery by the BUI service UUID with the rig's short name; the five characteristics
#   and flags; both button states read 0x00; a malformed write changes nothing; per wait,
#   Cascable's write order, the rig moves to the next step and, at rest there, notifies
#   0x01 then 0x00, exactly once; nothing moves while Continue Available is 0; a disconnect
#   and reconnect mid-program (the rig advertises again and goes on); the wait after the
#   last step ends the program (exit 0, trace at the final pose).
cat > "$W/rig.json" <<EOF
{
  "name": "hil-bui",
  "loopRateHz": 50,
  "output": { "type": "sim" },
  "stepSync": { "name": "hil-rig", "adapter": "hci0", "pressMs": 100, "requirePairing": false },
  "axes": [
    { "name": "pan", "channel": 0, "pulseUs": [1000, 2000], "angleDeg": [-90, 90], "home": 0,
      "softLimits": [-85, 85], "maxVelocity": 60, "maxAcceleration": 240, "idle": "hold" }
  ]
}
EOF
cat > "$W/steps.json" <<EOF
{
  "rig": "rig.json",
  "kind": "steps",
  "settleSeconds": 0.1,
  "steps": [ { "pose": { "pan": 10 } }, { "pose": { "pan": 40 } }, { "pose": { "pan": -20 } } ]
}
EOF
OUTF=$W/play.out
timeout 350 "$RIG" play "$W/steps.json" --trigger bui --trace "$W/trace.csv" --no-realtime > "$OUTF" 2>&1 & RP=$!
fails=""
fail() { fails="$fails; $*"; note "FAIL: $*"; }
if ! wait_for 120 grep -q 'registered on hci0' "$OUTF"; then
  fail "the rig did not register its accessory on hci0"
  kill $RP 2>/dev/null
fi
# 2 rounds (step 1 → 2, 2 → 3) with a reconnect after the first, then the wait after the last
# step, which ends the program.
timeout 300 $PY "$GUEST/bui_central.py" /org/bluez/hci1 2 --timeout 120 --forget --trace "$W/trace.csv" \
  --malformed --reconnect-after 1 --end $RP --nudge hci0 > "$W/central.log" 2>&1; crc=$?
wait_for 60 sh -c "! kill -0 $RP" || { fail "the rig did not end after the last wait"; kill $RP; }
wait $RP; rc=$?
echo "--- bui_central.py (exit $crc):"; cat "$W/central.log"
echo "--- rig play (exit $rc):"; grep -v '^step [0-9]/[0-9] ' "$OUTF" | tail -60
keep "$W/trace.csv" "$W/central.log" "$OUTF"

[ $crc = 0 ] || fail "bui_central.py exit $crc: $(grep '"fail"' "$W/central.log" | tail -1)"
[ $rc = 0 ] || fail "rig play exit $rc"
# The central's events against the rig's trace (the pose it reported at each event).
$PY - "$W/central.log" "$W/trace.csv" <<'EOF' || fail "central log / trace: see above"
import csv, json, sys
ev = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
steps = [10.0, 40.0, -20.0]
bad = []
def pan(e): return e.get("pose", {}).get("pan")
disc = [e for e in ev if e["event"] == "discovered"]
if len(disc) != 2 or any(e["name"] != "hil-rig" for e in disc):
    bad.append(f"discovered {[(e.get('name'), e.get('address')) for e in disc]}, want hil-rig twice (before and after the reconnect)")
mal = [e for e in ev if e["event"] == "malformed"]
if not mal:
    bad.append("no malformed write")
elif pan(mal[0]) != steps[0]:
    bad.append(f"malformed write: rig at {pan(mal[0])}, want {steps[0]}")
rnd = 0
presses = {}
for e in ev:
    if e["event"] == "waiting":
        rnd = e["round"]
        # Continue Available 0 until now: the rig still stands at the step it reached.
        if pan(e) != steps[rnd - 1]:
            bad.append(f"round {rnd}: before Continue Available 1 the rig is at {pan(e)}, want {steps[rnd - 1]}")
    elif e["event"] == "notified" and e["characteristic"] == "continue":
        presses.setdefault(rnd, []).append(e["value"])
        # Pressed only once at rest at the next step (the trace is flushed every 20 ms).
        if e["value"] == "01" and pan(e) != steps[rnd]:
            bad.append(f"round {rnd}: press notified with the rig at {pan(e)}, want {steps[rnd]}")
    elif e["event"] == "notified":
        bad.append(f"unexpected notification {e}")
    elif e["event"] == "end-wait" and pan(e) != steps[-1]:
        bad.append(f"last wait: rig at {pan(e)}, want {steps[-1]}")
if presses != {1: ["01", "00"], 2: ["01", "00"]}:
    bad.append(f"continue notifications per round {presses}, want exactly 01, 00 in rounds 1 and 2")
last = {}
for r in csv.DictReader(open(sys.argv[2])):
    last[r["axis"]] = round(float(r["position_deg"]), 2)
if last.get("pan") != steps[-1]:
    bad.append(f"trace ends at {last}, want pan {steps[-1]}")
print("malformed write:", mal[0].get("answer") if mal else None)
for b in bad: print("BAD:", b)
sys.exit(1 if bad else 0)
EOF
# The rig refuses the 2-byte write (InvalidValueLength). The central is told "accepted" all
# the same: bluetoothd does not wait for the application's answer on a characteristic that
# also allows write-without-response (Cascable's flags), so the rig's log is the evidence.
grep -q 'refused a write to 941680a1-a4d9-48df-927b-2e19870f8085 (2 bytes)' "$OUTF" ||
  fail "the rig did not log refusing the 2-byte write to Continue Available"

if [ -z "$fails" ]; then
  result bui PASS "rig on hci0 found by UUID as hil-rig, 5 characteristics, reads 00, malformed write refused by the rig (bluetoothd told the central $(grep -o '"answer": "[^"]*"' "$W/central.log" | cut -d'"' -f4)), nothing changed, 2 rounds each one press/release at rest at the next step, nothing moves while Continue Available is 0, reconnect mid-program, last wait ends it (exit 0)"
else
  result bui FAIL "${fails#; }"
fi
exit 0
